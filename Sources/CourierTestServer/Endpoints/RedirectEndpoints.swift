import NIOCore
import NIOHTTP1

/// /status/{codes}, /redirect-to, /redirect/{n}, /relative-redirect/{n}, /absolute-redirect/{n}.
enum RedirectEndpoints {
    /// /status/{codes}: one final (200-999) code, or a comma list (`200,500` or weighted `200:0.9,500:0.1`)
    /// from which one is drawn; `?seed=` makes the draw repeatable.
    static func status(_ request: ServerRequest, codes text: String) -> any RequestBodyConsumer {
        var choices: [(code: Int, weight: Double)] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let code = Int(pieces[0].trimmingWhitespace()), (200...999).contains(code) else {
                return DiscardingBody(
                    .error(
                        .badRequest, "invalid status code \(String(item).debugDescription) in \(text.debugDescription)")
                )
            }
            var weight = 1.0
            if pieces.count == 2 {
                guard let parsed = Double(pieces[1].trimmingWhitespace()), parsed.isFinite, parsed >= 0 else {
                    return DiscardingBody(.error(.badRequest, "invalid weight in \(String(item).debugDescription)"))
                }
                weight = parsed
            }
            choices.append((code, weight))
        }
        let random: UInt64
        if let seedText = request.queryValue("seed"), let seed = UInt64(seedText) {
            var generator = SplitMix64(seed: seed)
            random = generator.next()
        } else {
            random = request.server.nextStatusRandom()
        }
        let total = choices.reduce(0) { $0 + $1.weight }
        var chosen = choices[choices.count - 1].code
        if total > 0 {
            var point = Double(random >> 11) / Double(1 << 53) * total
            for choice in choices {
                if point < choice.weight {
                    chosen = choice.code
                    break
                }
                point -= choice.weight
            }
        }
        return DiscardingBody(statusResponse(chosen, request: request))
    }

    /// The body and headers httpbin sends with a bare status.
    static func statusResponse(_ code: Int, request: ServerRequest) -> ResponsePlan {
        let status = HTTPResponseStatus(statusCode: code)
        switch code {
        case 301, 302, 303, 305, 307, 308:
            return .empty(status, headers: [("Location", "/redirect/1")])
        case 401:
            return .empty(status, headers: [("WWW-Authenticate", "Basic realm=\"Fake Realm\"")])
        case 407:
            return .empty(status, headers: [("Proxy-Authenticate", "Basic realm=\"Fake Realm\"")])
        case 418:
            return .text(
                "\n    -=[ teapot ]=-\n", status: status,
                headers: [("X-More-Info", "http://tools.ietf.org/html/rfc2324")])
        default:
            return .empty(status)
        }
    }

    /// /redirect-to?url=…&status_code=…: any method; the status defaults to 302.
    static func redirectTo(_ request: ServerRequest) -> any RequestBodyConsumer {
        guard let target = request.queryValue("url") else {
            return DiscardingBody(.error(.badRequest, "/redirect-to needs a url query parameter"))
        }
        guard !target.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
            return DiscardingBody(
                .error(.badRequest, "the redirect url contains CR, LF or NUL: \(target.debugDescription)"))
        }
        var code = 302
        if let text = request.queryValue("status_code") {
            guard let parsed = Int(text), (300...399).contains(parsed) else {
                return DiscardingBody(.error(.badRequest, "status_code must be 300-399, got \(text.debugDescription)"))
            }
            code = parsed
        }
        return DiscardingBody(.empty(HTTPResponseStatus(statusCode: code), headers: [("Location", target)]))
    }

    /// /redirect/{n}, /relative-redirect/{n}, /absolute-redirect/{n}: n hops ending at /get.
    static func chain(_ request: ServerRequest, kind: String, count text: String) -> any RequestBodyConsumer {
        guard let count = Int(text), count >= 1 else {
            return DiscardingBody(
                .error(.badRequest, "the redirect count must be a positive integer, got \(text.debugDescription)"))
        }
        let absolute = kind == "absolute-redirect" || (kind == "redirect" && request.queryValue("absolute") == "true")
        let nextPath: String
        if count == 1 {
            nextPath = "/get"
        } else if kind == "redirect" {
            nextPath = absolute ? "/absolute-redirect/\(count - 1)" : "/relative-redirect/\(count - 1)"
        } else {
            nextPath = "/\(kind)/\(count - 1)"
        }
        let location = absolute ? request.absoluteURL(nextPath) : nextPath
        return DiscardingBody(.empty(.found, headers: [("Location", location)]))
    }
}
