import NIOCore
import NIOHTTP1

/// Fixed-content and header endpoints: /html, /json, /xml, /encoding/utf8, /basic-auth,
/// /bearer, /cookies, /response-headers, /gzip, /deflate.
enum ContentEndpoints {
    static func route(_ request: ServerRequest) -> (any RequestBodyConsumer)? {
        nil
    }
}
