#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the standard streams are connected to, read once at start-up.
struct Terminal: Sendable {
    /// stdin is a terminal (so it is not a body to read).
    var stdinIsTerminal: Bool
    /// stdout is a terminal (pretty output by default, no binary bodies).
    var stdoutIsTerminal: Bool
    /// stderr is a terminal (progress bars by default).
    var stderrIsTerminal: Bool

    /// The streams of this process. `COURIER_FORCE_TTY=1` makes stdout and stderr count as
    /// terminals, so tests can check terminal output through pipes.
    static func current() -> Terminal {
        let forced = getenv("COURIER_FORCE_TTY").map { String(cString: $0) == "1" } ?? false
        return Terminal(
            stdinIsTerminal: isatty(0) == 1,
            stdoutIsTerminal: forced || isatty(1) == 1,
            stderrIsTerminal: forced || isatty(2) == 1)
    }

    /// The width of stderr's terminal, 80 when unknown.
    static func stderrColumns() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
