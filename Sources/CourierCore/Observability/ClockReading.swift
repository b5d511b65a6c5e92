/// A reading of `ContinuousClock`, kept as its distance from one reading taken when the process
/// first needed one.
///
/// The metrics store these instead of `ContinuousClock.Instant` because the standard library
/// does not freeze that type's layout: every copy, store and optional check of an `Instant`
/// outside the standard library goes through runtime value-witness calls, and a small GET made,
/// copied and merged about thirty of them. A `Duration` is two integers, so a reading (and the
/// structs that hold several) copies as plain bytes. Converting back is exact.
struct ClockReading: Sendable {
    /// The first reading any metrics took; every other reading is an offset from it.
    private static let origin = ContinuousClock.now

    /// Time since ``origin``; negative for instants before it.
    var offset: Duration

    /// The clock now.
    static var now: ClockReading { ClockReading(ContinuousClock.now) }

    /// The reading of `instant`.
    init(_ instant: ContinuousClock.Instant) {
        offset = Self.origin.duration(to: instant)
    }

    /// The reading as the clock's own instant.
    var instant: ContinuousClock.Instant { Self.origin.advanced(by: offset) }

    /// The time from this reading to `later`.
    func duration(to later: ClockReading) -> Duration { later.offset - offset }
}

extension Optional where Wrapped == ClockReading {
    /// The instant of a reading that may be missing: for the public, `Instant`-typed metrics.
    var instant: ContinuousClock.Instant? {
        get { map(\.instant) }
        set { self = newValue.map(ClockReading.init) }
    }
}
