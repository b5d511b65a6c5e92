import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier` in a real terminal (tmux, from Debian's packages): what a person sees. Coloured,
/// indented JSON; a progress bar that redraws in place and ends at 100%; no escape codes in
/// a file. Skipped without tmux, unless `CI=true`, where that fails.
@Suite(.timeLimit(.minutes(3))) struct TerminalTests {
    static let tmuxPath = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A tmux server of its own (its own socket) with one 120x40 window.
    ///
    /// The whole session runs inside one `sh`: a tmux server started straight from
    /// Foundation's `Process` did not survive its client here, one started by a shell does.
    struct Tmux {
        let tmux: String
        let socket = "courier-test-\(UUID().uuidString)"

        static let script = """
            t="$1"; sock="$2"; dir="$3"; cmd="$4"; prompt="$5"; keys="$6"
            "$t" -L "$sock" -f /dev/null new-session -d -x 120 -y 40 -c "$dir" \\
              sh -c "$cmd; echo __COURIER_EXIT_\\$?; sleep 60" || exit 1
            i=0
            if [ -n "$prompt" ]; then
              while [ $i -lt 600 ]; do
                "$t" -L "$sock" capture-pane -p -J -S -200 | grep -qF "$prompt" && break
                sleep 0.1; i=$((i+1))
              done
              "$t" -L "$sock" send-keys -l "$keys"
              "$t" -L "$sock" send-keys Enter
            fi
            i=0
            while [ $i -lt 600 ]; do
              "$t" -L "$sock" capture-pane -p -J -S -200 | grep -q __COURIER_EXIT_ && break
              sleep 0.1; i=$((i+1))
            done
            "$t" -L "$sock" capture-pane -p -e -J -S -200
            "$t" -L "$sock" kill-server
            """

        /// Runs `command` in the pane's shell and returns the screen, escape codes kept, once
        /// it has printed its exit status (at most 60 s); with `typing`, types that and Enter
        /// once the screen shows `prompt`.
        func screen(after command: String, directory: URL, typing: String = "", at prompt: String = "") throws
            -> String
        {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", Self.script, "sh", tmux, socket, directory.path, command, prompt, typing]
            var environment = ProcessInfo.processInfo.environment
            environment["TERM"] = "xterm-256color"
            environment.removeValue(forKey: "TMUX")
            environment.removeValue(forKey: "COURIER_FORCE_TTY")
            process.environment = environment
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
            try process.run()
            let screen = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(screen.contains("__COURIER_EXIT_0"), "\(command): \(screen)")
            return screen
        }
    }

    func withTerminal(_ body: (Tmux, String, URL) throws -> Void) async throws {
        guard let tmuxPath = Self.tmuxPath else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("tmux must be installed when CI=true")
            }
            return
        }
        let server = try await TestServer.start()
        let directory = try CourierProcess.scratchDirectory()
        let tmux = Tmux(tmux: tmuxPath)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try body(tmux, server.baseURL.absoluteString, directory)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test func jsonIsColouredAndIndented() async throws {
        try await withTerminal { tmux, base, directory in
            let courier = Self.quoted(try CourierProcess.executable().path)
            let screen = try tmux.screen(after: "\(courier) \(base)/get q==1", directory: directory)
            #expect(screen.contains("HTTP/1.1 200 OK"))
            #expect(
                screen.contains("\u{1B}[34m\"args\"") || screen.contains("\u{1B}[34m\u{1B}[49m\"args\""), "\(screen)")
            let plain = screen.replacingOccurrences(of: #"\x1B\[[0-9;]*m"#, with: "", options: .regularExpression)
            #expect(plain.contains("\n    \"args\": {\n        \"q\": \"1\"\n    },"), "\(plain)")
            // The body ends with a line break: the marker starts a line of its own.
            #expect(plain.contains("}\n__COURIER_EXIT_0"), "\(plain)")
        }
    }

    @Test func progressBarRedrawsInPlaceAndEndsAt100Percent() async throws {
        try await withTerminal { tmux, base, directory in
            let courier = Self.quoted(try CourierProcess.executable().path)
            let screen = try tmux.screen(
                after: "\(courier) -d -o out.bin '\(base)/drip?numbytes=3000000&duration=2'", directory: directory)
            let plain = screen.replacingOccurrences(of: #"\x1B\[[0-9;]*m"#, with: "", options: .regularExpression)
            let bars = plain.split(separator: "\n").filter { $0.contains("download [") }
            #expect(bars.count == 1, "\(plain)")
            #expect(bars.first?.contains("100%") == true, "\(plain)")
            #expect(bars.first?.contains("3.0 MB / 3.0 MB") == true, "\(plain)")
            #expect(plain.contains("Saved 3.0 MB to \"out.bin\""))
            #expect(try Data(contentsOf: directory.appendingPathComponent("out.bin")).count == 3_000_000)
        }
    }

    /// `-a user` alone asks for the password on the terminal, without echoing it, as httpie does.
    @Test func aMissingPasswordIsAskedFor() async throws {
        try await withTerminal { tmux, base, directory in
            let courier = Self.quoted(try CourierProcess.executable().path)
            let screen = try tmux.screen(
                after: "\(courier) --check-status -a ann \(base)/basic-auth/ann/s3cret", directory: directory,
                typing: "s3cret", at: "password for ann@")
            let plain = screen.replacingOccurrences(of: #"\x1B\[[0-9;]*m"#, with: "", options: .regularExpression)
            #expect(plain.contains("courier: password for ann@127.0.0.1:"), "\(plain)")
            #expect(plain.contains("HTTP/1.1 200 OK"), "\(plain)")
            #expect(!plain.contains("s3cret\n"), "the password was echoed: \(plain)")
        }
    }

    @Test func noEscapeCodesWhenStdoutIsAFile() async throws {
        try await withTerminal { tmux, base, directory in
            let courier = Self.quoted(try CourierProcess.executable().path)
            _ = try tmux.screen(after: "\(courier) -v \(base)/get > out.txt", directory: directory)
            let text = try String(contentsOf: directory.appendingPathComponent("out.txt"), encoding: .utf8)
            #expect(text.contains("HTTP/1.1 200 OK"))
            #expect(!text.contains("\u{1B}"))
        }
    }
}
