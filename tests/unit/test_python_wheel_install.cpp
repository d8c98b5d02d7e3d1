// Unit tests for pip's install layout: where each wheel entry lands, entry-point wrappers, the
// "#!python" rewrite, and the RECORD written after install, byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "python/wheel_install.hpp"
#include "util/sha256.hpp"

using rootlock::python::ConsoleScript;
using rootlock::python::install_plan;
using rootlock::python::installed_path;
using rootlock::python::InstallScheme;
using rootlock::python::parse_console_scripts;
using rootlock::python::script_wrapper;
using rootlock::python::WheelEntry;
using rootlock::python::WheelScan;

namespace {

const InstallScheme k_scheme{"/opt/venv", "3.11.4"};

std::string digest(const std::string& bytes) {
    rootlock::util::Sha256 hasher;
    hasher.update(bytes);
    return rootlock::util::Sha256::to_base64url(hasher.digest());
}

WheelEntry entry(const std::string& path, const std::string& content, bool executable = false,
                 bool hold = false) {
    WheelEntry out;
    out.path = path;
    out.size = content.size();
    out.mode = executable ? 0755 : 0644;
    out.executable = executable;
    out.sha256_base64 = digest(content);
    if (hold)
        out.content = content;
    return out;
}

// A scan as scan_wheel would give it (entries sorted), built directly: install is pure.
WheelScan demo_scan(const std::string& entry_points = "") {
    WheelScan scan;
    scan.filename.filename = "Demo-1.0-py3-none-any.whl";
    scan.filename.name = "Demo";
    scan.filename.normalized_name = "demo";
    scan.filename.version = "1.0";
    scan.dist_info = "Demo-1.0.dist-info";
    scan.data_dir = "Demo-1.0.data";
    scan.metadata = "Metadata-Version: 2.1\nName: Demo\nVersion: 1.0\n";
    scan.wheel = "Wheel-Version: 1.0\n";
    scan.entry_points = entry_points;
    scan.record = "(not read by install)";
    scan.entries = {
        entry("Demo-1.0.data/data/share/demo/x.txt", "data\n"),
        entry("Demo-1.0.data/headers/demo.h", "int x;\n"),
        entry("Demo-1.0.data/platlib/plat.py", "p = 1\n"),
        entry("Demo-1.0.data/scripts/plain", "#!/bin/sh\necho hi\n", true, true),
        entry("Demo-1.0.data/scripts/tool", "#!pythonw -u\nprint('tool')\n", false, true),
        entry("Demo-1.0.dist-info/METADATA", scan.metadata),
        entry("Demo-1.0.dist-info/RECORD", "old"),
        entry("Demo-1.0.dist-info/WHEEL", scan.wheel),
        entry("demo/__init__.py", "x = 1\n"),
        entry("demo/a+b.py", ""),
        entry("demo/a,b.py", ""),
        entry("demo/bin/helper", "#!/bin/sh\n", true),
    };
    if (!entry_points.empty()) {
        scan.entries.insert(scan.entries.begin() + 8,
                            entry("Demo-1.0.dist-info/entry_points.txt", entry_points));
    }
    return scan;
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("site-packages is lib/pythonX.Y/site-packages of the venv") {
        CHECK(rootlock::python::site_packages(k_scheme) ==
              "/opt/venv/lib/python3.11/site-packages");
        CHECK(rootlock::python::site_packages(InstallScheme{"/venv/", "3.13"}) ==
              "/venv/lib/python3.13/site-packages");
        CHECK(rootlock::python::python_major_minor(k_scheme) == "3.11");
    }

    TEST_CASE("each wheel entry lands where pip's venv scheme puts it") {
        WheelScan scan = demo_scan();
        const std::vector<std::pair<std::string, std::string>> rows = {
            {"demo/__init__.py", "/opt/venv/lib/python3.11/site-packages/demo/__init__.py"},
            {"Demo-1.0.dist-info/METADATA",
             "/opt/venv/lib/python3.11/site-packages/Demo-1.0.dist-info/METADATA"},
            {"Demo-1.0.data/purelib/pure/x.py", "/opt/venv/lib/python3.11/site-packages/pure/x.py"},
            {"Demo-1.0.data/platlib/plat.py", "/opt/venv/lib/python3.11/site-packages/plat.py"},
            {"Demo-1.0.data/scripts/tool", "/opt/venv/bin/tool"},
            {"Demo-1.0.data/headers/demo.h", "/opt/venv/include/site/python3.11/Demo/demo.h"},
            {"Demo-1.0.data/data/share/demo/x.txt", "/opt/venv/share/demo/x.txt"},
        };
        for (const auto& [path, expected] : rows) {
            CAPTURE(path);
            auto where = installed_path(scan, entry(path, ""), k_scheme);
            if (!where.ok())
                FAIL(where.error().text());
            CHECK(*where == expected);
        }
    }

    TEST_CASE("an unknown .data scheme or an entry naming only its scheme is an error") {
        WheelScan scan = demo_scan();
        const std::vector<std::pair<std::string, std::string>> rows = {
            {"Demo-1.0.data/lib/x.py", "Demo-1.0.data/lib/x.py: unknown .data scheme 'lib'"},
            {"Demo-1.0.data/scripts",
             "Demo-1.0.data/scripts: names no file inside its .data scheme"},
            {"Demo-1.0.data/data/", "Demo-1.0.data/data/: names no file inside its .data scheme"},
        };
        for (const auto& [path, expected] : rows) {
            CAPTURE(path);
            auto where = installed_path(scan, entry(path, ""), k_scheme);
            REQUIRE_FALSE(where.ok());
            CHECK(where.error().text() == expected);
        }
    }

    TEST_CASE("entry_points.txt gives console and gui scripts sorted by name") {
        const std::string text =
            "# comment\n"
            "[other]\n"
            "ignored = not:checked here\n"
            "[console_scripts]\n"
            "zeta = zeta.cli:main [extra1, extra2]\n"
            "alpha=alpha:run.go\r\n"
            "; another comment\n"
            "\n"
            "[ gui_scripts ]\n"
            "beta-gui = beta.gui:start\n";
        auto scripts = parse_console_scripts(text, "entry_points.txt");
        if (!scripts.ok())
            FAIL(scripts.error().text());
        REQUIRE(scripts->size() == 3);
        CHECK((*scripts)[0].name == "alpha");
        CHECK((*scripts)[0].module == "alpha");
        CHECK((*scripts)[0].function == "run.go");
        CHECK((*scripts)[1].name == "beta-gui");
        CHECK((*scripts)[1].gui);
        CHECK((*scripts)[2].name == "zeta");
        CHECK((*scripts)[2].module == "zeta.cli");
        CHECK((*scripts)[2].function == "main");
        CHECK_FALSE((*scripts)[2].gui);
        CHECK(parse_console_scripts("", "e")->empty());
    }

    TEST_CASE("malformed console_scripts entries give one exact line") {
        const std::vector<std::pair<std::string, std::string>> rows = {
            {"[console_scripts]\nx = mod\n",
             "e:2: 'mod' has no ':function' (a callable suffix is required)"},
            {"[console_scripts]\njust a name\n", "e:2: expected 'name = module:function'"},
            {"[console_scripts\n", "e:1: unterminated section header"},
            {"[console_scripts]\n../evil = m:f\n", "e:2: '../evil' is not a script file name"},
            {"[console_scripts]\n.. = m:f\n", "e:2: '..' is not a script file name"},
            {"[gui_scripts]\n = m:f\n", "e:2: '' is not a script file name"},
            {"[console_scripts]\nx = m:f [a\n", "e:2: unterminated extras in 'm:f [a'"},
            {"[console_scripts]\nx = m-y:f\n", "e:2: 'm-y:f' is not module:function"},
            {"[console_scripts]\nx = m:f()\n", "e:2: 'm:f()' is not module:function"},
            {"[console_scripts]\nx = m..n:f\n", "e:2: 'm..n:f' is not module:function"},
            {"[console_scripts]\nx = :f\n", "e:2: ':f' is not module:function"},
        };
        for (const auto& [text, expected] : rows) {
            CAPTURE(text);
            auto scripts = parse_console_scripts(text, "e");
            REQUIRE_FALSE(scripts.ok());
            CHECK(scripts.error().text() == expected);
        }
    }

    TEST_CASE("a console script wrapper is pip's, with the venv's python") {
        ConsoleScript script{"tool", "demo.cli", "main.run", false};
        CHECK(script_wrapper(script, "/opt/venv/bin/python") ==
              "#!/opt/venv/bin/python\n"
              "# -*- coding: utf-8 -*-\n"
              "import re\n"
              "import sys\n"
              "from demo.cli import main\n"
              "if __name__ == '__main__':\n"
              "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
              "    sys.exit(main.run())\n");
    }

    TEST_CASE("the install plan writes every file, rewritten scripts, wrappers and RECORD") {
        const std::string entry_points = "[console_scripts]\ndemo = demo.cli:main\n";
        WheelScan scan = demo_scan(entry_points);
        auto plan = install_plan(scan, k_scheme, true, "/usr/bin/python3.11");
        if (!plan.ok())
            FAIL(plan.error().text());

        const std::string site = "/opt/venv/lib/python3.11/site-packages";
        const std::string dist = site + "/Demo-1.0.dist-info";
        std::vector<std::string> paths;
        for (const auto& file : *plan)
            paths.push_back(file.path);
        CHECK(paths == std::vector<std::string>{
                           "/opt/venv/bin/demo",
                           "/opt/venv/bin/plain",
                           "/opt/venv/bin/tool",
                           "/opt/venv/include/site/python3.11/Demo/demo.h",
                           dist + "/INSTALLER",
                           dist + "/METADATA",
                           dist + "/RECORD",
                           dist + "/REQUESTED",
                           dist + "/WHEEL",
                           dist + "/entry_points.txt",
                           site + "/demo/__init__.py",
                           site + "/demo/a+b.py",
                           site + "/demo/a,b.py",
                           site + "/demo/bin/helper",
                           site + "/plat.py",
                           "/opt/venv/share/demo/x.txt",
                       });
        auto find = [&](const std::string& path) -> const rootlock::python::InstalledFile* {
            for (const auto& file : *plan) {
                if (file.path == path)
                    return &file;
            }
            FAIL("no planned file " << path);
            return &plan->front();
        };

        const auto* wrapper = find("/opt/venv/bin/demo");
        CHECK(wrapper->mode == 0755);
        CHECK(wrapper->has_content);
        CHECK(wrapper->source == nullptr);
        CHECK(wrapper->content == script_wrapper(ConsoleScript{"demo", "demo.cli", "main", false},
                                                 "/opt/venv/bin/python"));

        // pip's fix_script replaces the whole first line, arguments included.
        const auto* tool = find("/opt/venv/bin/tool");
        CHECK(tool->content == "#!/opt/venv/bin/python\nprint('tool')\n");
        CHECK(tool->size == tool->content.size());
        CHECK(tool->mode == 0644);  // pip keeps the zip's (missing) x bit for .data/scripts
        const auto* plain = find("/opt/venv/bin/plain");
        CHECK(plain->content == "#!/bin/sh\necho hi\n");  // held by the scan, so kept
        CHECK(plain->mode == 0755);
        CHECK(plain->source == &scan.entries[3]);

        const auto* init = find(site + "/demo/__init__.py");
        CHECK_FALSE(init->has_content);
        CHECK(init->size == 6);
        CHECK(init->mode == 0644);
        CHECK(find(site + "/demo/bin/helper")->mode == 0755);
        CHECK(find(dist + "/METADATA")->content == scan.metadata);
        CHECK(find(dist + "/INSTALLER")->content == "rootlock\n");
        CHECK(find(dist + "/REQUESTED")->content.empty());

        auto row = [](const std::string& path, const std::string& bytes) {
            return path + ",sha256=" + digest(bytes) + "," + std::to_string(bytes.size()) + "\r\n";
        };
        const std::string record =
            row("../../../bin/demo", wrapper->content) +
            row("../../../bin/plain", "#!/bin/sh\necho hi\n") +
            row("../../../bin/tool", "#!/opt/venv/bin/python\nprint('tool')\n") +
            row("../../../include/site/python3.11/Demo/demo.h", "int x;\n") +
            row("../../../share/demo/x.txt", "data\n") +
            row("Demo-1.0.dist-info/INSTALLER", "rootlock\n") +
            row("Demo-1.0.dist-info/METADATA", scan.metadata) + "Demo-1.0.dist-info/RECORD,,\r\n" +
            row("Demo-1.0.dist-info/REQUESTED", "") + row("Demo-1.0.dist-info/WHEEL", scan.wheel) +
            row("Demo-1.0.dist-info/entry_points.txt", entry_points) +
            row("demo/__init__.py", "x = 1\n") + row("demo/a+b.py", "") +
            row("\"demo/a,b.py\"", "") + row("demo/bin/helper", "#!/bin/sh\n") +
            row("plat.py", "p = 1\n");
        const auto* written = find(dist + "/RECORD");
        CHECK(written->content == record);
        CHECK(written->mode == 0644);
    }

    TEST_CASE("REQUESTED is written only for a requested distribution") {
        auto plan = install_plan(demo_scan(), k_scheme, false, "/usr/bin/python3.11");
        REQUIRE(plan.ok());
        for (const auto& file : *plan)
            CHECK(file.path.find("REQUESTED") == std::string::npos);
        CHECK(plan->size() == 13);  // 11 entries less RECORD, plus INSTALLER and the new RECORD
    }

    TEST_CASE("two files installing to one path refuse the plan") {
        WheelScan scan = demo_scan();
        scan.entries.insert(scan.entries.begin() + 2,
                            entry("Demo-1.0.data/platlib/demo/a+b.py", ""));
        auto plan = install_plan(scan, k_scheme, false, "/usr/bin/python3.11");
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().text() ==
              "Demo-1.0-py3-none-any.whl: two files install to "
              "/opt/venv/lib/python3.11/site-packages/demo/a+b.py");
    }
}
