import Foundation
import NIOConcurrencyHelpers

/// Renders one progress line: a bar, bytes done of total, percent, rate and time left.
///
/// A pure function of its inputs so that it can be tested without a clock:
/// `[#########           ]  45.2 MB / 100.0 MB  45%  120.3 MB/s  ETA 0:00:01`.
enum ProgressBar {
    /// The line for `completed` of `total` bytes (nil when unknown) after `elapsed` seconds.
    static func render(completed: Int64, total: Int64?, elapsed: Double, width: Int = 80) -> String {
        let rate = elapsed > 0 ? Double(completed) / elapsed : 0
        var fields: [String] = []
        if let total, total > 0 {
            let fraction = min(1, max(0, Double(completed) / Double(total)))
            fields.append("\(formatBytes(completed)) / \(formatBytes(total))")
            fields.append(String(format: "%3d%%", Int(fraction * 100)))
            fields.append("\(formatBytes(Int64(rate)))/s")
            if completed >= total {
                fields.append("in \(formatElapsed(elapsed))")
            } else if rate > 0 {
                fields.append("ETA \(formatDuration(Double(total - completed) / rate))")
            } else {
                fields.append("ETA -:--:--")
            }
            let text = fields.joined(separator: "  ")
            let barWidth = max(10, min(40, width - text.count - 4))
            let filled = Int(fraction * Double(barWidth))
            return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: barWidth - filled)
                + "]  " + text
        }
        fields.append(formatBytes(completed))
        fields.append("\(formatBytes(Int64(rate)))/s")
        return fields.joined(separator: "  ")
    }

    /// Decimal units, one decimal: `999 B`, `1.5 kB`, `200.0 MB`, `1.1 GB`.
    static func formatBytes(_ count: Int64) -> String {
        let units = ["kB", "MB", "GB", "TB"]
        if count < 1000 { return "\(count) B" }
        var value = Double(count) / 1000
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }

    /// How long a finished transfer took: `0.02 s` and `12.3 s` under a minute (rounding a
    /// quick download up to `0:00:01` would misstate it), `h:mm:ss` beyond.
    static func formatElapsed(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-:--:--" }
        if seconds < 10 { return String(format: "%.2f s", seconds) }
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        return formatDuration(seconds)
    }

    /// `h:mm:ss`.
    static func formatDuration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-:--:--" }
        let total = Int(seconds.rounded(.up))
        return String(format: "%d:%02d:%02d", total / 3600, (total / 60) % 60, total % 60)
    }
}

/// Draws a progress bar on stderr, at most ten times a second, and a final line when done.
///
/// Progress callbacks arrive on the transport's threads, so the drawing state sits behind a lock.
final class ProgressReporter: Sendable {
    private struct State {
        var lastDraw: Double = -1
        var finished = false
    }

    private let label: String
    private let enabled: Bool
    private let start = Date()
    private let state = NIOLockedValueBox(State())

    /// A reporter that draws only when `enabled`.
    init(label: String, enabled: Bool) {
        self.label = label
        self.enabled = enabled
    }

    /// Reports `completed` of `total` bytes.
    func update(completed: Int64, total: Int64?) {
        guard enabled else { return }
        let elapsed = Date().timeIntervalSince(start)
        let shouldDraw = state.withLockedValue { state -> Bool in
            guard !state.finished, elapsed - state.lastDraw >= 0.1 else { return false }
            state.lastDraw = elapsed
            return true
        }
        if shouldDraw { draw(completed: completed, total: total, elapsed: elapsed, final: false) }
    }

    /// Draws the last line and moves to a new one.
    func finish(completed: Int64, total: Int64?) {
        guard enabled else { return }
        let first = state.withLockedValue { state -> Bool in
            defer { state.finished = true }
            return !state.finished
        }
        if first {
            draw(completed: completed, total: total ?? completed, elapsed: Date().timeIntervalSince(start), final: true)
        }
    }

    /// Ends a bar that stopped short (an interrupted transfer) so the next line starts clean.
    func abandon() {
        guard enabled else { return }
        let drawn = state.withLockedValue { state -> Bool in
            defer { state.finished = true }
            return !state.finished && state.lastDraw >= 0
        }
        if drawn { StandardStreams.writeError("\n") }
    }

    private func draw(completed: Int64, total: Int64?, elapsed: Double, final: Bool) {
        let columns = Terminal.stderrColumns()
        let line =
            label + " "
            + ProgressBar.render(completed: completed, total: total, elapsed: elapsed, width: columns - label.count - 1)
        StandardStreams.writeError("\r\u{1B}[K" + line + (final ? "\n" : ""))
    }
}
