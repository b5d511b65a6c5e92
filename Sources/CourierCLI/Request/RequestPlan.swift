import Courier
import Foundation

/// What the command line asks to send, decided before any serializer runs: the method, the
/// URL with its query items, the headers, and the kind of body with its fields in command-line order.
struct RequestPlan: Sendable {
    /// How the data items become a body.
    enum BodyKind: Sendable, Equatable {
        /// No data items and no raw body.
        case none
        /// A JSON object of the data fields (`--json`, the default).
        case json
        /// `application/x-www-form-urlencoded` (`--form` without files).
        case form
        /// `multipart/form-data` (`--multipart`, or `--form` with a file field).
        case multipart
        /// A raw body from `--raw`, stdin or `@path`.
        case raw
    }

    /// A data field's value: text, or (JSON only) a raw JSON value.
    enum FieldValue: Sendable, Equatable {
        case text(String)
        case json(OrderedJSON)
    }

    /// A data field with the item it came from.
    struct Field: Sendable {
        var name: String
        var value: FieldValue
        var item: RequestItem
        /// Where the item stood among the command line's items.
        var position = 0
    }

    /// A file field (`name@path`) with its checked path.
    struct FileField: Sendable {
        var name: String
        var path: String
        var mimeType: String?
        var item: RequestItem
        /// Where the item stood among the command line's items.
        var position = 0
    }

    /// Where a raw body comes from.
    enum RawBody: Sendable {
        case bytes(Data)
        case file(path: String)
        /// Streamed from stdin (see ``StandardInput``).
        case stdin(RequestBody)
    }

    var method: String
    var url: URL
    /// Headers in command-line order; a nil value removes a default header (`Name:`).
    var headers: [(name: String, value: String?)]
    var bodyKind: BodyKind
    var fields: [Field]
    var files: [FileField]
    var rawBody: RawBody?
    /// The multipart boundary from `--boundary`, if any.
    var boundary: String?
    /// True unless `--form` or `--multipart`: a raw body is then sent as JSON, as httpie does.
    var jsonMode = true
    /// True under `--form` (not `--multipart`): a raw body is then sent as a urlencoded form.
    var formMode = false
    /// `--json` given: even a request without data asks for JSON and says it sends JSON, as httpie's does.
    var explicitJSON = false
}
