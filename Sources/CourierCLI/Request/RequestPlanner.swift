import Courier
import Foundation

/// Turns parsed items and options into a ``RequestPlan``, with httpie's rules: data makes the
/// default method POST; `--form` turns multipart when a file field appears; a raw body and
/// data fields cannot be mixed; files are checked now so that errors quote the item.
struct RequestPlanner {
    enum DataMode: Sendable { case json, form, multipart }

    var mode: DataMode
    var boundary: String?
    var rawArgument: String?
    /// The body piped on stdin (nil when empty, ignored or a terminal).
    var stdinBody: RequestBody?
    /// `--path-as-is`: send `.` and `..` path segments as typed.
    var keepsDotSegments = false

    /// Builds the plan.
    /// - Throws: ``CLIError`` (usage) quoting the offending item or option.
    func plan(positionals: Positionals) throws -> RequestPlan {
        let url = try URLShorthand.url(from: positionals.url, keepsDotSegments: keepsDotSegments)
        var headers: [(name: String, value: String?)] = []
        var queryPairs: [QueryStringPair] = []
        var fields: [RequestPlan.Field] = []
        var files: [RequestPlan.FileField] = []
        var rawBody: RequestPlan.RawBody?
        var rawSource: String?

        func setRaw(_ body: RequestPlan.RawBody, from source: String) throws {
            if let rawSource {
                throw CLIError.usage("\(source) and \(rawSource) both give the request body; use one")
            }
            rawBody = body
            rawSource = source
        }

        if let rawArgument { try setRaw(.bytes(Data(rawArgument.utf8)), from: "--raw") }
        if let stdinBody { try setRaw(.stdin(stdinBody), from: "stdin") }

        for (position, item) in positionals.items.enumerated() {
            switch item.kind {
            case .header:
                headers.append((item.key, item.value.isEmpty ? nil : item.value))
            case .emptyHeader:
                headers.append((item.key, ""))
            case .query:
                queryPairs.append(QueryStringPair(key: item.key, value: .string(item.value)))
            case .dataField:
                fields.append(.init(name: item.key, value: .text(item.value), item: item, position: position))
            case .dataFieldFromFile:
                let text = try readText(item.value, for: item)
                fields.append(.init(name: item.key, value: .text(text), item: item, position: position))
            case .rawJSONField, .rawJSONFieldFromFile:
                let text = item.kind == .rawJSONField ? item.value : try readText(item.value, for: item)
                let value: OrderedJSON
                do {
                    value = try JSONParser.parse(Array(text.utf8))
                } catch let failure as JSONParser.Failure {
                    throw CLIError.usage("\"\(item.original)\": not valid JSON: \(failure)")
                }
                guard mode == .json else {
                    let text = try Self.formText(of: value, item: item)
                    fields.append(.init(name: item.key, value: .text(text), item: item, position: position))
                    continue
                }
                fields.append(.init(name: item.key, value: .json(value), item: item, position: position))
            case .fileField:
                let path = try checkedFile(item.value, for: item)
                if item.isRawBodyFile {
                    try setRaw(.file(path: path), from: "\"\(item.original)\"")
                } else {
                    guard mode != .json else {
                        throw CLIError.usage("\"\(item.original)\": file fields need --form or --multipart")
                    }
                    files.append(
                        .init(name: item.key, path: path, mimeType: item.mimeType, item: item, position: position))
                }
            }
        }

        var kind: RequestPlan.BodyKind
        switch mode {
        case .json: kind = fields.isEmpty ? .none : .json
        case .form: kind = !files.isEmpty ? .multipart : (fields.isEmpty ? .none : .form)
        case .multipart: kind = .multipart
        }
        if let rawSource {
            if let first = fields.first?.item ?? files.first?.item {
                let hint =
                    rawSource == "stdin"
                    ? "; pass --ignore-stdin when stdin is not meant as the body"
                    : "; send the body as data items or from \(rawSource), not both"
                throw CLIError.usage(
                    "the request body from \(rawSource) and the data item \"\(first.original)\" cannot be mixed"
                        + hint)
            }
            kind = .raw
        }
        if boundary != nil, kind != .multipart {
            throw CLIError.usage("--boundary needs a multipart body (--multipart, or --form with a file field)")
        }

        let method = positionals.method ?? (kind == .none ? "GET" : "POST")
        return RequestPlan(
            method: method, url: try Self.appending(queryPairs, to: url, original: positionals.url), headers: headers,
            bodyKind: kind, fields: fields, files: files, rawBody: rawBody, boundary: boundary,
            jsonMode: mode == .json, formMode: mode == .form)
    }

    /// What a raw JSON field (`:=`) sends in a form, as in httpie: a string its text, a number or
    /// boolean its JSON literal as typed (where httpie sends Python's `True` and `1.5` for `true`
    /// and `1.50`).
    /// - Throws: ``CLIError`` (usage) for `null`, an array or an object, which a form field cannot
    ///   hold (httpie refuses them too).
    static func formText(of value: OrderedJSON, item: RequestItem) throws -> String {
        switch value {
        case .string(let text): return text
        case .number(let literal): return literal
        case .bool(let flag): return flag ? "true" : "false"
        case .null, .array, .object:
            throw CLIError.usage(
                "\"\(item.original)\": a form field holds a string, number or boolean, not JSON null, an array"
                    + " or an object; send a JSON body (no --form or --multipart) for those")
        }
    }

    /// Appends `name==value` items to the URL's query, with `&` when it already has one.
    static func appending(_ pairs: [QueryStringPair], to url: URL, original: String) throws -> URL {
        guard !pairs.isEmpty else { return url }
        let encoded = QueryString.encode(pairs: pairs)
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw CLIError.usage("\"\(original)\" is not a valid URL")
        }
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + encoded
        } else {
            components.percentEncodedQuery = encoded
        }
        guard let result = components.url else { throw CLIError.usage("\"\(original)\" is not a valid URL") }
        return result
    }

    /// The most bytes a `=@` or `:=@` item embeds: its text goes into the body in memory.
    static let maximumEmbeddedFileSize = 64 << 20

    private func checkedFile(_ path: String, for item: RequestItem) throws -> String {
        let expanded = (path as NSString).expandingTildeInPath
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: expanded, isDirectory: &isDirectory) else {
            throw CLIError.usage("\"\(item.original)\": no such file: \(path)")
        }
        guard !isDirectory.boolValue else { throw CLIError.usage("\"\(item.original)\": \(path) is a directory") }
        guard FileManager.default.isReadableFile(atPath: expanded) else {
            throw CLIError.usage("\"\(item.original)\": \(path) is not readable")
        }
        return expanded
    }

    private func readText(_ path: String, for item: RequestItem) throws -> String {
        let checked = try checkedFile(path, for: item)
        // Read to the end rather than by the file's size, so that a pipe (`@/dev/stdin`,
        // `@<(command)`) gives its text too, as in httpie; but no further than a value embedded
        // in a body can sensibly be (`=@/dev/zero` grew without end): a file to send as it is
        // is an `@` or `field@` item, which streams it.
        var data = Data()
        do {
            guard let handle = FileHandle(forReadingAtPath: checked) else { throw CocoaError(.fileReadNoPermission) }
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                data.append(chunk)
                guard data.count <= Self.maximumEmbeddedFileSize else {
                    throw CLIError.usage(
                        "\"\(item.original)\": \(path) is over \(Self.maximumEmbeddedFileSize >> 20) MiB, too large to embed in the body; send a file as it is with @\(path) or field@\(path)"
                    )
                }
            }
        } catch let error as CLIError {
            throw error
        } catch {
            let reason =
                (error as? CocoaError)?.underlying.map { "\($0.localizedDescription)" } ?? error.localizedDescription
            throw CLIError.usage("\"\(item.original)\": cannot read \(path): \(reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError.usage("\"\(item.original)\": \(path) is not UTF-8 text")
        }
        return text
    }
}
