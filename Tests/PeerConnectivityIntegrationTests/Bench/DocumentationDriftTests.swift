import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// What the documentation says against what the code and the built tools do: the wire protocol's version
/// in docs/PROTOCOL.md, the defaults in docs/BENCHMARK.md's option tables against the tools' `--help`, and
/// every flag of every `reflector` or `test-runner` command line in the README and the docs.
@Suite("documentation drift")
struct DocumentationDriftTests {
    static let root = repositoryRoot()

    /// A file of the repository, as text.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The first capture of every match of `pattern` in `text`.
    static func captures(_ pattern: String, in text: String) throws -> [String] {
        try text.matches(of: Regex(pattern).anchorsMatchLineEndings()).compactMap { match in
            match.output.count > 1 ? match.output[1].substring.map(String.init) : nil
        }
    }

    @Test("docs/PROTOCOL.md and docs/BENCHMARK.md's example state the version the library speaks")
    func protocolVersion() throws {
        let version = String(LibraryVersion.wireProtocol)
        let protocolText = try Self.text("docs/PROTOCOL.md")
        let statements: [(what: String, pattern: String)] = [
            ("the title", #"^# Wire protocol, version (\d+)\s*$"#),
            ("HELLO's version field", #"version UInt16 \((\d+)\)"#),
            ("the HELLO example's bytes", #"^[0-9A-F]{2} [0-9A-F]{2}\s+version (\d+)\s*$"#),
            ("the version check", #"whose version is not (\d+)"#),
            ("the TXT record", #"pc\.v=(\d+)"#),
        ]
        for statement in statements {
            let stated = try Self.captures(statement.pattern, in: protocolText)
            #expect(!stated.isEmpty, "docs/PROTOCOL.md no longer states the version in \(statement.what)")
            for value in stated {
                #expect(
                    value == version,
                    "docs/PROTOCOL.md, \(statement.what): version \(value); the library speaks \(version)"
                )
            }
        }
        let example = try Self.captures(#""wireProtocol" : (\d+)"#, in: try Self.text("docs/BENCHMARK.md"))
        #expect(example == [version], "docs/BENCHMARK.md's example document says wireProtocol \(example)")
    }

    @Test("every default in docs/BENCHMARK.md's option tables is the one the tool's --help prints")
    func toolDefaults() async throws {
        let benchmark = try Self.text("docs/BENCHMARK.md")
        for (section, tool) in [("## reflector", ["reflector"]), ("## test-runner run", ["test-runner", "run"])] {
            let help = try await ToolHelp(tool)
            let rows = DocumentedOption.rows(of: try #require(Self.section(section, of: benchmark)))
            #expect(rows.count >= 15, "\(section): only \(rows.count) options in its table")
            for row in rows {
                let name = tool.joined(separator: " ") + " " + row.names.joined(separator: ", ")
                guard let entry = help.entry(named: row.names) else {
                    Issue.record("docs/BENCHMARK.md documents \(name), which --help does not list")
                    continue
                }
                let stated = DefaultValues(documented: row.defaultCell)
                guard !stated.isEmpty else { continue }
                let printed = entry.defaultText
                #expect(printed != nil, "\(name): the docs state the default \(row.defaultCell); --help states none")
                guard let printed else { continue }
                let printedNumbers = DefaultValues(printed: printed).numbers
                for number in stated.numbers {
                    #expect(
                        printedNumbers.contains(number),
                        "\(name): the docs state \(row.defaultCell), --help prints \"default\(printed)\""
                    )
                }
                for literal in stated.literals {
                    #expect(
                        printed.contains(literal),
                        "\(name): the docs state \(row.defaultCell), --help prints \"default\(printed)\""
                    )
                }
            }
            // And the other way: an option the tool takes is documented.
            for entry in help.entries where !entry.names.contains("--help") && !entry.names.contains("--version") {
                #expect(
                    rows.contains { !Set($0.names).isDisjoint(with: entry.names) },
                    "\(tool.joined(separator: " ")) \(entry.names.joined(separator: ", ")) is not in docs/BENCHMARK.md"
                )
            }
        }
        // The README's firewall rules name the reflector's default ports.
        let readme = try Self.text("README.md")
        let reflector = try await ToolHelp(["reflector"])
        for flag in ["--port", "--raw-echo-port", "--udp-ports"] {
            let printed = try #require(reflector.entry(named: [flag])?.defaultText, "\(flag) prints no default")
            let port = printed.trimmingCharacters(in: CharacterSet(charactersIn: ": "))
            #expect(readme.contains(port), "the README does not name reflector \(flag)'s default, \(port)")
        }
    }

    @Test("every flag of a reflector or test-runner command in the README and the docs is one the tool takes")
    func commandLineFlags() async throws {
        var helps: [String: ToolHelp] = [:]
        var commandsInReadme = 0
        for path in ["README.md", "CONTRIBUTING.md", "docs/BENCHMARK.md", "docs/LAB.md"] {
            for command in ShellCommand.shellCommands(in: try Self.text(path)) {
                let key = command.tool.joined(separator: " ")
                if helps[key] == nil { helps[key] = try await ToolHelp(command.tool) }
                let names = Set(helps[key]?.entries.flatMap(\.names) ?? [])
                for flag in command.flags {
                    #expect(names.contains(flag), "\(path): `\(command.line)` uses \(flag), which \(key) does not take")
                }
                if path == "README.md" { commandsInReadme += 1 }
            }
        }
        #expect(commandsInReadme >= 4, "the README shows \(commandsInReadme) reflector or test-runner commands")
    }

    /// The text of the Markdown section that starts with the heading line `heading`, up to the next heading
    /// of the same level.
    static func section(_ heading: String, of markdown: String) -> String? {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return nil }
        let level = heading.prefix { $0 == "#" } + " "
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix(level) } ?? lines.endIndex
        return lines[start..<end].joined(separator: "\n")
    }
}

/// One row of an option table of docs/BENCHMARK.md: `| `-w`, `--stream-window B` | default | meaning |`.
struct DocumentedOption {
    var names: [String]
    var defaultCell: String

    static func rows(of section: String) -> [DocumentedOption] {
        section.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `-") else { return nil }
            // Cells are split at pipes that are not escaped (`bulk\|data`).
            var cells: [String] = []
            var cell = ""
            var previous: Character = " "
            for character in line.dropFirst() {
                if character == "|", previous != "\\" {
                    cells.append(cell.trimmingCharacters(in: .whitespaces))
                    cell = ""
                } else {
                    cell.append(character)
                }
                previous = character
            }
            guard cells.count >= 2 else { return nil }
            let names = DefaultValues.backticked(cells[0]).compactMap { code in
                code.split(separator: " ").first.map(String.init)
            }.filter { $0.hasPrefix("-") }
            return DocumentedOption(names: names, defaultCell: cells[1])
        }
    }
}

/// The values a default states: numbers (sizes in KiB, MiB or GiB as bytes) and literal words or paths.
struct DefaultValues {
    var numbers: [Double] = []
    var literals: [String] = []

    var isEmpty: Bool { numbers.isEmpty && literals.isEmpty }

    /// The contents of the `code spans` of a Markdown cell.
    static func backticked(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    /// The numbers in a text, a unit after one making it bytes.
    static func numbers(in text: String) -> [Double] {
        let units: [String: Double] = ["KiB": 1_024, "MiB": 1_048_576, "GiB": 1_073_741_824]
        let pattern = #/(\d+(?:\.\d+)?)(?: (KiB|MiB|GiB))?/#
        return text.matches(of: pattern).compactMap { match in
            Double(match.output.1).map { $0 * (match.output.2.flatMap { units[String($0)] } ?? 1) }
        }
    }

    /// What the default cell of a docs table states. Code spans are literals (or numbers), and flags in them
    /// are left out; outside them, numbers count, and a single word other than "off" or "none" (which say
    /// there is no default value) is a literal. A phrase ("a new temporary folder") states nothing checked.
    init(documented cell: String) {
        let codes = Self.backticked(cell)
        for code in codes where !code.hasPrefix("-") {
            if let number = Double(code) { numbers.append(number) } else { literals.append(code) }
        }
        let prose = cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
        numbers += Self.numbers(in: prose)
        let words = prose.split { !$0.isLetter && !$0.isNumber && $0 != "-" }
        if codes.isEmpty, numbers.isEmpty, words.count == 1, !["off", "none"].contains(words[0]) {
            literals.append(String(words[0]))
        }
    }

    /// What a default printed by --help states: every number in it.
    init(printed text: String) {
        numbers = Self.numbers(in: text)
    }
}

/// A tool's `--help`, read into its options.
struct ToolHelp {
    struct Entry {
        /// `-w`, `--stream-window`.
        var names: [String]
        /// The option's help, its lines joined by single spaces (ArgumentParser wraps it to a width).
        var text: String

        /// What follows "default" in its help, up to the end of its parenthesis or clause: ": 7447" for
        /// "(default: 7447)", " 1000" for "(default 1000); --test resource: ...". Nil when it names none.
        var defaultText: String? {
            let clauses = text.components(separatedBy: "default").dropFirst().map { rest in
                String(rest.prefix { $0 != ")" && $0 != ";" })
            }.filter { !$0.hasPrefix("s ") }  // "defaults to", in a sentence about another option
            return clauses.isEmpty ? nil : clauses.joined(separator: "; ")
        }
    }

    var entries: [Entry] = []

    /// Runs `tool --help` (`tool` is the executable and its subcommand, if any) as the integration tests
    /// run the tools: the build's own binaries, beside the test bundle.
    init(_ tool: [String]) async throws {
        let process = try ToolProcess(tool[0], Array(tool.dropFirst()) + ["--help"])
        let status = try await process.exitStatus(within: .seconds(60) * slowdown)
        try #require(status == 0, "\(tool.joined(separator: " ")) --help: \(process.output) \(process.errors)")
        var inOptions = false
        for line in process.output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("OPTIONS:") {
                inOptions = true
            } else if !line.hasPrefix(" ") {
                inOptions = false
            } else if inOptions, line.hasPrefix("  -") {
                let words = line.split(separator: " ")
                let head = words.prefix { $0.hasPrefix("-") || $0.hasPrefix("<") }
                entries.append(
                    Entry(
                        names: head.filter { $0.hasPrefix("-") }.map { String($0.trimmingCharacters(in: [","])) },
                        text: words.dropFirst(head.count).joined(separator: " ")
                    )
                )
            } else if inOptions, !entries.isEmpty {
                let more = line.split(separator: " ").joined(separator: " ")
                entries[entries.count - 1].text += entries[entries.count - 1].text.isEmpty ? more : " " + more
            }
        }
    }

    /// The entry that has any of `names`.
    func entry(named names: [String]) -> Entry? {
        entries.first { !Set($0.names).isDisjoint(with: names) }
    }
}

/// A `reflector` or `test-runner` command line shown in a ```sh block of a Markdown file.
struct ShellCommand {
    /// The line as written, continuation lines joined.
    var line: String
    /// The executable's name and its subcommand, if any: ["reflector"], ["test-runner", "run"].
    var tool: [String]
    /// The flags given, without their values: "--test", "-c".
    var flags: [String]

    static let tools: Set<String> = ["reflector", "test-runner"]
    static let subcommands: Set<String> = ["run", "report"]

    static func shellCommands(in markdown: String) -> [ShellCommand] {
        var commands: [ShellCommand] = []
        var inShell = false
        var pending = ""
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if !inShell {
                inShell = line == "```sh" || line == "```console"
                continue
            }
            if line.hasPrefix("```") {
                inShell = false
                continue
            }
            var text = String(line)
            if let comment = text.range(of: " #") { text = String(text[..<comment.lowerBound]) }
            if text.hasPrefix("#") { continue }
            if text.hasSuffix("\\") {
                pending += text.dropLast() + " "
                continue
            }
            let whole = pending + text
            pending = ""
            for part in whole.split(whereSeparator: { ";|&".contains($0) }) {
                commands += Self.command(String(part)).map { [$0] } ?? []
            }
        }
        return commands
    }

    /// The command in one segment of a shell line, when it runs one of the tools.
    static func command(_ segment: String) -> ShellCommand? {
        let words = segment.split(separator: " ").map { $0.trimmingCharacters(in: ["\"", "'"]) }
        guard let index = words.firstIndex(where: { tools.contains(String($0.split(separator: "/").last ?? "")) })
        else { return nil }
        var tool = [String(words[index].split(separator: "/").last!)]
        var rest = words[(index + 1)...]
        if tool == ["test-runner"], let first = rest.first, subcommands.contains(first) {
            tool.append(first)
            rest = rest.dropFirst()
        }
        let flags = rest.filter { $0.hasPrefix("-") && $0.count > 1 && Double($0) == nil }.map {
            String($0.split(separator: "=", maxSplits: 1).first ?? "")
        }
        return ShellCommand(line: segment.trimmingCharacters(in: .whitespaces), tool: tool, flags: flags)
    }
}
