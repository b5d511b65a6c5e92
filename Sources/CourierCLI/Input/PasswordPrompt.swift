import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asks for the password of `-a user` given without one, on the controlling terminal with echo
/// off, as httpie does (`http: password for user@host:`). The terminal, not stdin, which may be
/// the request's body.
enum PasswordPrompt {
    /// The password typed, without its line end.
    /// - Throws: ``CLIError`` (usage) when there is no terminal to ask on, or it closes first.
    static func ask(user: String, host: String) throws -> String {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard terminal >= 0 else {
            throw CLIError.usage(
                "--auth \"\(user)\": no terminal to ask for the password on; give it as --auth \(user):PASSWORD")
        }
        defer { close(terminal) }
        show("courier: password for \(user)@\(host): ", on: terminal)
        var saved = termios()
        let hasAttributes = tcgetattr(terminal, &saved) == 0
        var previousHandlers: [(Int32, sighandler_t?)] = []
        if hasAttributes {
            // A signal that ends the process while echo is off restores it first, as getpass does.
            promptTerminal = terminal
            promptSettings = saved
            previousHandlers = Self.endingSignals.map { ($0, signal($0, restoreTerminalAndReraise)) }
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(terminal, TCSAFLUSH, &silent)
        }
        defer {
            if hasAttributes {
                _ = tcsetattr(terminal, TCSAFLUSH, &saved)
                for (number, handler) in previousHandlers { signal(number, handler) }
                promptTerminal = -1
            }
            show("\n", on: terminal)
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(terminal, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else {
                throw CLIError.usage("--auth \"\(user)\": the terminal closed before a password was typed")
            }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }

    private static let endingSignals = [SIGINT, SIGTERM, SIGQUIT, SIGHUP]

    private static func show(_ text: String, on descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return write(descriptor, base + offset, buffer.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// The terminal a prompt has silenced and its settings before, for the signal handler below;
/// written only while no such signal can be handled yet, read only by the handler.
nonisolated(unsafe) private var promptTerminal: Int32 = -1
nonisolated(unsafe) private var promptSettings = termios()

/// Puts the terminal's echo back, then ends the process as the signal would have.
private func restoreTerminalAndReraise(_ number: Int32) {
    if promptTerminal >= 0 { _ = tcsetattr(promptTerminal, TCSANOW, &promptSettings) }
    signal(number, SIG_DFL)
    raise(number)
}
