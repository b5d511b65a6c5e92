import Foundation

/// Every workload and its implementations, by the names the driver passes on the command line.
enum Registry {
    typealias Run = @Sendable (Options) async throws -> Measurement

    static let workloads: [String: [String: Run]] = [
        "querystring-nested": [
            "courier": {
                try CourierQueryString.run(
                    parameters: CourierQueryString.nestedParameters(),
                    expected: QueryStringShapes.nestedQueryItems(), options: $0)
            },
            "foundation": { try FoundationQueryString.run(items: QueryStringShapes.nestedQueryItems(), options: $0) },
        ],
        "querystring-flat": [
            "courier": {
                try CourierQueryString.run(
                    parameters: CourierQueryString.flatParameters(),
                    expected: QueryStringShapes.flatQueryItems(), options: $0)
            },
            "foundation": { try FoundationQueryString.run(items: QueryStringShapes.flatQueryItems(), options: $0) },
        ],
        "multipart-fields": [
            "courier": { try CourierMultipart.runSmallFields(options: $0) },
            "multipartkit": { try SmallFields.runMultipartKit(options: $0) },
        ],
        "multipart-file": [
            "courier": { try CourierMultipart.runFileReader(options: $0) }
        ],
        "multipart-memory": [
            "courier": { try CourierMultipart.runInMemory(options: $0) },
            "multipartkit": { try InMemoryPart.runMultipartKit(options: $0) },
        ],
        "upload": [
            "courier": { try await CourierSession.upload(options: $0) },
            "ahc-sendfile": { try await RawAsyncHTTPClientUpload.run(options: $0) },
            "courier-urlsession": { try await URLSessionRows.upload(options: $0) },
        ],
        "resumable-upload": [
            "courier": { try await ResumableUploads.courier(options: $0, uploadProtocol: .tus) },
            "courier-ietf": { try await ResumableUploads.courier(options: $0, uploadProtocol: .ietf) },
        ],
        "download": [
            "courier": { try await CourierSession.download(options: $0) }
        ],
        "small-gets": [
            "courier": { try await CourierSession.smallGets(options: $0) },
            "ahc": { try await RawAsyncHTTPClient.smallGets(options: $0) },
            "ahc-delegate": { try await RawAsyncHTTPClient.smallGetsDelegate(options: $0) },
            "transport": { try await CourierSession.smallGets(options: $0, throughSession: false) },
            "courier-urlsession": { try await URLSessionRows.smallGets(options: $0) },
        ],
        "held-requests": [
            "courier": { try await HeldRequests.courier(options: $0) },
            "transport": { try await HeldRequests.courier(options: $0, throughSession: false) },
            "ahc": { try await HeldRequests.asyncHTTPClient(options: $0) },
        ],
        "h2-posts": [
            "courier": { try await HTTP2Requests.courier(options: $0, kind: .posts) },
            "ahc-h2": { try await HTTP2Requests.raw(options: $0, kind: .posts, http1Only: false) },
            "ahc-h1": { try await HTTP2Requests.raw(options: $0, kind: .posts, http1Only: true) },
        ],
        "h2-gets": [
            "courier": { try await HTTP2Requests.courier(options: $0, kind: .gets) },
            "ahc-h2": { try await HTTP2Requests.raw(options: $0, kind: .gets, http1Only: false) },
            "courier-h1": { try await HTTP2Requests.courier(options: $0, kind: .gets, allowsHTTP2: false) },
            "ahc-h1": { try await HTTP2Requests.raw(options: $0, kind: .gets, http1Only: true) },
            "ahc-h2-delegate": { try await HTTP2Requests.rawDelegate(options: $0, kind: .gets, http1Only: false) },
            "ahc-h1-delegate": { try await HTTP2Requests.rawDelegate(options: $0, kind: .gets, http1Only: true) },
        ],
        "stream": [
            "courier": { try await StreamedBodies.courier(options: $0) },
            "ahc": { try await StreamedBodies.asyncHTTPClient(options: $0) },
        ],
        "openapi-gets": [
            "courier": { try await OpenAPIClients.gets(options: $0, side: .courier) },
            "openapi-ahc": { try await OpenAPIClients.gets(options: $0, side: .peer) },
        ],
        "openapi-upload": [
            "courier": { try await OpenAPIClients.upload(options: $0, side: .courier) },
            "openapi-ahc": { try await OpenAPIClients.upload(options: $0, side: .peer) },
            "ahc-stream": { try await OpenAPIClients.rawUpload(options: $0) },
        ],
        "sse-parse": [
            "courier": { try SSEParse.courier(options: $0) }
        ],
        "cached-gets": [
            "courier": { try await CachedGets.run(options: $0, side: .cached) },
            "network": { try await CachedGets.run(options: $0, side: .network) },
            "memory-transport": { try await CachedGets.run(options: $0, side: .memoryTransport) },
        ],
    ]

    static var names: String { workloads.keys.sorted().joined(separator: ", ") + ", serve" }
}
