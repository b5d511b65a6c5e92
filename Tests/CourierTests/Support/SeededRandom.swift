/// A small, fast, reproducible generator (SplitMix64) for property tests.
///
/// Every property test takes its seed from `COURIER_PROPERTY_SEED` when set, otherwise from a
/// fixed default, and names the seed in its failure messages, so any failure replays exactly.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// The seed for a test: `COURIER_PROPERTY_SEED` if it parses, else `fallback`.
    static func seed(default fallback: UInt64) -> UInt64 {
        if let text = getenvString("COURIER_PROPERTY_SEED"), let value = UInt64(text) { return value }
        return fallback
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Random bytes, biased towards the bytes that break parsers (CR, LF, NUL, quotes, `%`, `&`, `=`, `[`, `]`).
    mutating func hostileBytes(count: Int) -> [UInt8] {
        let nasty: [UInt8] = [0x0D, 0x0A, 0x00, 0x22, 0x25, 0x26, 0x3D, 0x5B, 0x5D, 0x2D, 0x3B, 0x5C, 0x2F, 0x2B]
        return (0..<count).map { _ in
            Bool.random(using: &self) ? nasty.randomElement(using: &self) ?? 0 : UInt8.random(in: 0...255, using: &self)
        }
    }

    /// A random string of up to `maxScalars` scalars from every plane, with CR/LF/NUL and
    /// syntax characters frequent; always valid Unicode (a Swift String cannot hold a lone surrogate).
    mutating func hostileString(maxScalars: Int) -> String {
        let count = Int.random(in: 0...maxScalars, using: &self)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<count {
            let value: UInt32
            switch UInt8.random(in: 0..<8, using: &self) {
            case 0:
                let syntax: [Unicode.Scalar] = ["\r", "\n", "\0", "\"", "%", "&", "=", "[", "]", "+", " ", "\\"]
                value = syntax.randomElement(using: &self)?.value ?? 0
            case 1, 2: value = UInt32.random(in: 0x20...0x7E, using: &self)
            case 3: value = UInt32.random(in: 0x00...0x1F, using: &self)
            case 4: value = UInt32.random(in: 0x80...0x7FF, using: &self)
            case 5: value = UInt32.random(in: 0x800...0xFFFF, using: &self)
            case 6: value = UInt32.random(in: 0x1_0000...0x10_FFFF, using: &self)
            default: value = [0xFEFF, 0x200D, 0x202E, 0xFFFD, 0x1F468].randomElement(using: &self) ?? 0
            }
            // Surrogate code points are not scalars; those draws become U+FFFD.
            scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        return String(scalars)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

private func getenvString(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}
