/// A growable byte buffer for building query strings: capacity is checked once per appended
/// run rather than once per byte, and the bytes become a `String` with a single copy.
///
/// Noncopyable, so it has exactly one owner: no reference counting on the hot path (a class
/// costs a retain and release around calls), and `deinit` frees the memory on every path.
struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        self.base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// Makes room for `extra` more bytes, at least doubling when it must grow.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if extra > capacity &- count { grow(to: count + extra) }
    }

    @inline(never)
    private mutating func grow(to needed: Int) {
        let newCapacity = Swift.max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    /// Appends `%5B`, an escaped `[`.
    @inline(__always)
    mutating func appendEscapedOpenBracket() {
        appendEscape(endingIn: UInt8(ascii: "B"))
    }

    /// Appends `%5D`, an escaped `]`.
    @inline(__always)
    mutating func appendEscapedCloseBracket() {
        appendEscape(endingIn: UInt8(ascii: "D"))
    }

    /// Appends `%5` and `last` as three stores rather than a copy of a literal.
    @inline(__always)
    private mutating func appendEscape(endingIn last: UInt8) {
        reserve(3)
        base[count] = UInt8(ascii: "%")
        base[count &+ 1] = UInt8(ascii: "5")
        base[count &+ 2] = last
        count &+= 3
    }

    /// Appends bytes that need no escaping.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count &+= bytes.count
    }

    /// Appends `other`'s bytes.
    mutating func append(_ other: borrowing ByteWriter) {
        append(UnsafeBufferPointer(start: other.base, count: other.count))
    }

    /// Appends the UTF-8 of `text`, unescaped.
    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends `bytes` percent-escaped (``PercentEscaping``).
    mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count &* 3)
        var position = base + count
        for byte in bytes {
            if PercentEscaping.isLiteral(byte) {
                position.pointee = byte
                position += 1
            } else {
                position[0] = UInt8(ascii: "%")
                position[1] = PercentEscaping.hexDigit(byte &>> 4)
                position[2] = PercentEscaping.hexDigit(byte & 0x0F)
                position += 3
            }
        }
        count = position - base
    }

    /// Appends the UTF-8 of `text` percent-escaped, reading native and small strings in place.
    mutating func appendEscaped(_ text: String) {
        var text = text
        text.withUTF8 { appendEscaped($0) }
    }

    /// Appends the UTF-8 of `text` percent-escaped, with a space as `+` when `spaceAsPlus`
    /// (HTML forms) and as `%20` otherwise.
    mutating func appendFormEscaped(_ text: String, spaceAsPlus: Bool) {
        guard spaceAsPlus else { return appendEscaped(text) }
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: " ") {
                appendEscaped(UnsafeBufferPointer(rebasing: bytes[runStart..<offset]))
                append(UInt8(ascii: "+"))
                runStart = offset + 1
            }
            appendEscaped(UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
    }

    /// Appends `number` in decimal, without going through a `String`.
    mutating func appendDecimal(_ number: Int) {
        reserve(20)
        var magnitude = number.magnitude
        if number < 0 {
            base[count] = UInt8(ascii: "-")
            count &+= 1
        }
        var digitCount = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digitCount &+= 1
        }
        var position = count &+ digitCount &- 1
        repeat {
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
            position &-= 1
        } while magnitude > 0
        count &+= digitCount
    }

    /// Drops the bytes after the first `newCount`.
    @inline(__always)
    mutating func truncate(to newCount: Int) {
        count = Swift.min(count, newCount)
    }

    /// The bytes written so far, as text (they are valid UTF-8 by construction).
    func makeString() -> String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
