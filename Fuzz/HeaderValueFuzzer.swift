// A libFuzzer target for Courier's parsers of server-sent header values.
// Built by .ci/fuzz.sh together with Sources/CourierCore/Response/HeaderValues/*.swift only:
//   swiftc -sanitize=fuzzer,address -parse-as-library …
// Every input runs through every parser; a broken invariant stops the run with a message
// naming it, and libFuzzer saves the input as a crash artifact.

/// libFuzzer's entry point: parse `data` as each header value and check the invariants.
@_cdecl("LLVMFuzzerTestOneInput")
public func headerValueFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    checkContentDisposition(text)
    checkSafeFileName(text, limitSeed: bytes.first ?? 0)
    checkMediaType(text)
    checkContentRange(text)
    checkLocation(text)
    return 0
}

private func fail(_ invariant: String, _ input: String) -> Never {
    fatalError("invariant broken: \(invariant); input: \(String(reflecting: input))")
}

private func checkContentDisposition(_ text: String) {
    guard let disposition = ContentDisposition(text) else { return }
    if disposition.type.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { fail("type is lower-cased", text) }
    let names = disposition.parameters.map(\.name)
    if Set(names).count != names.count { fail("parameter names are unique", text) }
    if let safe = disposition.safeFileName { checkSafe(safe, limit: 255, input: text) }
}

private func checkSafeFileName(_ text: String, limitSeed: UInt8) {
    let limit = Int(limitSeed)  // exercises limits below the floor of 16 too
    guard let safe = ContentDisposition.safeFileName(from: text, maxUTF8Length: limit) else { return }
    checkSafe(safe, limit: max(16, limit), input: text)
}

private func checkSafe(_ name: String, limit: Int, input: String) {
    let utf8 = Array(name.utf8)
    if utf8.isEmpty { fail("safe name is not empty", input) }
    if utf8.count > limit { fail("safe name fits \(limit) bytes", input) }
    if utf8.contains(0x2F) || utf8.contains(0x5C) { fail("safe name has no / or \\", input) }
    if utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { fail("safe name has no control bytes", input) }
    if utf8.first == 0x2E { fail("safe name does not start with a dot", input) }
    for index in utf8.indices.dropLast() where utf8[index] == 0x2E && utf8[index + 1] == 0x2E {
        fail("safe name has no ..", input)
    }
    if ContentDisposition.safeFileName(from: name, maxUTF8Length: limit) != name {
        fail("safeFileName is idempotent", input)
    }
}

private func checkMediaType(_ text: String) {
    guard let mediaType = MediaType(text) else { return }
    guard let reparsed = MediaType(mediaType.description) else { fail("description re-parses", text) }
    if reparsed != mediaType { fail("description round-trips", text) }
    if let charset = mediaType.charset, charset.isEmpty { fail("charset is nil or non-empty", text) }
}

private func checkContentRange(_ text: String) {
    guard let contentRange = ContentRange(text) else { return }
    switch contentRange {
    case .satisfied(let first, let last, let completeLength):
        if first < 0 || first > last { fail("0 <= first <= last", text) }
        if let completeLength, last >= completeLength { fail("last < complete length", text) }
        if contentRange.byteCount != last - first + 1 { fail("byteCount = last - first + 1", text) }
    case .unsatisfied(let completeLength):
        if completeLength < 0 { fail("complete length >= 0", text) }
    }
}

private func checkLocation(_ text: String) {
    guard let location = LocationValue(text) else { return }
    if location.reference.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
        fail("reference is printable ASCII", text)
    }
    for base in ["http://example.test/a/b/c?q=1#frag", "https://[::1]:8443", "http://h"] {
        guard let resolved = location.resolved(against: base) else { continue }
        guard let reparsed = LocationValue(resolved), reparsed.reference == resolved else {
            fail("a resolved location is a valid, already-encoded reference", text)
        }
        if !reparsed.isAbsolute { fail("a resolved location is absolute", text) }
    }
    // A base taken from the input itself must not crash the resolver either.
    let halves = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    if halves.count == 2, let reference = LocationValue(String(halves[1])) {
        _ = reference.resolved(against: String(halves[0]))
    }
}
