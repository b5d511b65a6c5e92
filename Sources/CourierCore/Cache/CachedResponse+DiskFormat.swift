import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat

/// The file form of a ``CachedResponse``:
///
/// ```
/// "CCH1" | u32 metadata length | metadata (JSON) | u64 body length | body | u64 FNV-1a of all before
/// ```
///
/// Integers are big-endian. A file that is shorter or longer than its lengths say, whose
/// checksum does not match, or whose metadata does not decode, is no entry: reading it returns
/// nil, and the cache treats it as a miss.
extension CachedResponse {
    private static let magic: [UInt8] = Array("CCH1".utf8)

    private struct Metadata: Codable {
        var key: String
        var url: String
        var status: Int
        var reason: String
        var fields: [[String]]
        var requestTime: Double
        var responseTime: Double
        var varying: [VaryingField]
    }

    /// The bytes of the file.
    func encodedForDisk() throws -> Data {
        let metadata = Metadata(
            key: key, url: url.absoluteString, status: status.code, reason: status.reasonPhrase,
            fields: headerFields.map { [$0.name.rawName, $0.value] },
            requestTime: requestTime.timeIntervalSince1970, responseTime: responseTime.timeIntervalSince1970,
            varying: varyingFields)
        let json = try JSONEncoder().encode(metadata)
        var data = Data()
        data.reserveCapacity(4 + 4 + json.count + 8 + body.readableBytes + 8)
        data.append(contentsOf: Self.magic)
        Self.append(UInt64(json.count), bytes: 4, to: &data)
        data.append(json)
        Self.append(UInt64(body.readableBytes), bytes: 8, to: &data)
        body.withUnsafeReadableBytes { data.append(contentsOf: $0) }
        Self.append(Self.checksum(data), bytes: 8, to: &data)
        return data
    }

    /// The entry in `data`, or nil when the file is truncated, padded, corrupt or of another format.
    static func decodedFromDisk(_ data: Data) -> CachedResponse? {
        let bytes = [UInt8](data)
        guard bytes.count >= 4 + 4 + 8 + 8, Array(bytes[0..<4]) == magic else { return nil }
        let metadataLength = Int(readInteger(bytes, at: 4, bytes: 4))
        let bodyLengthOffset = 8 + metadataLength
        guard bodyLengthOffset + 8 <= bytes.count else { return nil }
        let bodyLength = readInteger(bytes, at: bodyLengthOffset, bytes: 8)
        let bodyOffset = bodyLengthOffset + 8
        guard bodyLength <= UInt64(bytes.count - bodyOffset), bodyOffset + Int(bodyLength) + 8 == bytes.count
        else { return nil }
        let checksumOffset = bodyOffset + Int(bodyLength)
        guard readInteger(bytes, at: checksumOffset, bytes: 8) == checksum(bytes[0..<checksumOffset]) else {
            return nil
        }
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: Data(bytes[8..<bodyLengthOffset])),
            let url = URL(string: metadata.url), (100...999).contains(metadata.status)
        else { return nil }
        var fields = HTTPFields()
        for pair in metadata.fields {
            guard pair.count == 2, let name = HTTPField.Name(pair[0]) else { return nil }
            fields.append(HTTPField(name: name, value: pair[1]))
        }
        return CachedResponse(
            key: metadata.key, url: url,
            status: HTTPResponse.Status(code: metadata.status, reasonPhrase: metadata.reason), headerFields: fields,
            body: ByteBuffer(bytes: bytes[bodyOffset..<checksumOffset]),
            requestTime: Date(timeIntervalSince1970: metadata.requestTime),
            responseTime: Date(timeIntervalSince1970: metadata.responseTime), varyingFields: metadata.varying)
    }

    /// FNV-1a, 64 bits: catches a torn or bit-flipped file; not a defence against tampering.
    static func checksum<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    private static func append(_ value: UInt64, bytes count: Int, to data: inout Data) {
        for index in (0..<count).reversed() { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    private static func readInteger(_ bytes: [UInt8], at offset: Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + count) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
