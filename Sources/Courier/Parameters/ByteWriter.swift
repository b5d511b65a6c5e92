/// A growable byte buffer for building query strings: capacity is checked once per appended
/// run rather than once per byte, and the bytes become a `String` with a single copy.
///
/// A class so that its memory is freed on every path by `deinit`; it is never shared
/// between tasks (each encode makes its own).
final class ByteWriter {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    // Held per writer so that the hot loop does not pass through the globals' lazy initializers.
    private let literalTable = PercentEscaping.literalTable
    private let hexDigits = PercentEscaping.hexDigits

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        self.base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// Makes room for `extra` more bytes, at least doubling when it must grow.
    @inline(__always)
    private func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        let newCapacity = Swift.max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends one byte.
    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends bytes that need no escaping.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends text known at compile time, such as an already-escaped bracket, unescaped.
    func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 of `text`, unescaped.
    func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends `bytes` percent-escaped (``PercentEscaping``).
    func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count * 3)
        var position = base + count
        literalTable.withUnsafeBufferPointer { literal in
            hexDigits.withUnsafeBufferPointer { hex in
                for byte in bytes {
                    if literal[Int(byte)] {
                        position.pointee = byte
                        position += 1
                    } else {
                        position[0] = UInt8(ascii: "%")
                        position[1] = hex[Int(byte >> 4)]
                        position[2] = hex[Int(byte & 0x0F)]
                        position += 3
                    }
                }
            }
        }
        count = position - base
    }

    /// Appends the UTF-8 of `text` percent-escaped, reading native strings in place.
    func appendEscaped(_ text: String) {
        var text = text
        text.withUTF8 { appendEscaped($0) }
    }

    /// Appends `bytes` percent-escaped.
    func appendEscaped(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { appendEscaped($0) }
    }

    /// Appends `other`'s bytes.
    func append(_ other: ByteWriter) {
        append(UnsafeBufferPointer(start: other.base, count: other.count))
    }

    /// Appends `number` in decimal, without going through a `String`.
    func appendDecimal(_ number: Int) {
        reserve(20)
        var magnitude = number.magnitude
        if number < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var digitCount = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digitCount += 1
        }
        var position = count + digitCount - 1
        repeat {
            base[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            position -= 1
        } while magnitude > 0
        count += digitCount
    }

    /// Drops the bytes after the first `newCount`.
    func truncate(to newCount: Int) {
        count = Swift.min(count, newCount)
    }

    /// The bytes written so far, as text (they are valid UTF-8 by construction).
    func makeString() -> String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
