import CourierDigest
import Foundation

/// A server's `WWW-Authenticate: Digest …` challenge (RFC 7616 §3.3), and the `Authorization`
/// answer to it (§3.4).
struct DigestChallenge: Equatable, Sendable {
    /// The hash algorithms answered: RFC 7616's MD5 and SHA-256, each with its `-sess` variant.
    enum Algorithm: String, Sendable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"

        var isSession: Bool { self == .md5Session || self == .sha256Session }

        func hash(_ text: String) -> String {
            switch self {
            case .md5, .md5Session: return MD5.hex(text.utf8)
            case .sha256, .sha256Session: return SHA256.hash(data: Array(text.utf8)).hexString
            }
        }
    }

    var realm: String
    var nonce: String
    var opaque: String?
    var algorithm: Algorithm
    /// Whether the server offered `qop=auth` (RFC 2069's form, without qop, otherwise).
    var offersAuthQuality: Bool
    /// `stale=true`: the nonce expired, the credentials were right.
    var isStale: Bool

    /// The challenge to answer among the Digest challenges of these `WWW-Authenticate` values:
    /// the first SHA-256 one when the server offers it (RFC 7616 §3.7: the client picks the
    /// strongest it supports), else the first Courier answers; nil when there is none.
    static func first(in values: [String]) -> DigestChallenge? {
        let answerable = values.flatMap(Self.challenges(in:)).compactMap(DigestChallenge.init(parameters:))
        return answerable.first { $0.algorithm == .sha256 || $0.algorithm == .sha256Session } ?? answerable.first
    }

    init?(parameters: [String: String]) {
        guard let realm = parameters["realm"], let nonce = parameters["nonce"] else { return nil }
        let algorithmName = parameters["algorithm"] ?? "MD5"
        guard
            let algorithm = [Algorithm.md5, .md5Session, .sha256, .sha256Session].first(where: {
                $0.rawValue.caseInsensitiveCompare(algorithmName) == .orderedSame
            })
        else { return nil }
        let qualities = (parameters["qop"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        // Only `auth` is answered; a challenge that offers nothing but `auth-int` is not, nor a
        // `-sess` one without qop (its answer would hash a client nonce it cannot send).
        if parameters["qop"] != nil, !qualities.contains("auth") { return nil }
        if algorithm.isSession, !qualities.contains("auth") { return nil }
        self.realm = realm
        self.nonce = nonce
        self.opaque = parameters["opaque"]
        self.algorithm = algorithm
        self.offersAuthQuality = qualities.contains("auth")
        self.isStale = parameters["stale"]?.lowercased() == "true"
    }

    /// The `Authorization` value for `method` on `uri` (the request target as sent), the
    /// `count`th use of this nonce, with the client nonce `clientNonce`.
    func authorization(
        user: String, password: String, method: String, uri: String, count: Int, clientNonce: String
    ) -> String {
        let nonceCount = String(String(count, radix: 16).suffix(8)).leftPadded(to: 8)
        var secret = algorithm.hash("\(user):\(realm):\(password)")
        if algorithm.isSession { secret = algorithm.hash("\(secret):\(nonce):\(clientNonce)") }
        let target = algorithm.hash("\(method):\(uri)")
        let response =
            offersAuthQuality
            ? algorithm.hash("\(secret):\(nonce):\(nonceCount):\(clientNonce):auth:\(target)")
            : algorithm.hash("\(secret):\(nonce):\(target)")
        var parts = [
            "username=\(Self.quoted(user))", "realm=\(Self.quoted(realm))", "nonce=\(Self.quoted(nonce))",
            "uri=\(Self.quoted(uri))", "algorithm=\(algorithm.rawValue)", "response=\"\(response)\"",
        ]
        if offersAuthQuality { parts += ["qop=auth", "nc=\(nonceCount)", "cnonce=\(Self.quoted(clientNonce))"] }
        if let opaque { parts.append("opaque=\(Self.quoted(opaque))") }
        return "Digest " + parts.joined(separator: ", ")
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The parameters of each Digest challenge in one `WWW-Authenticate` value, which may list
    /// several challenges (`Basic realm="a", Digest realm="b", nonce="c"`): names lowercased,
    /// quoted values unescaped.
    static func challenges(in value: String) -> [[String: String]] {
        var result: [[String: String]] = []
        var current: [String: String]?
        var scanner = Substring(value)
        while true {
            scanner = scanner.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !scanner.isEmpty else { break }
            let token = scanner.prefix { !" \t,=".contains($0) }
            scanner = scanner.dropFirst(token.count)
            let afterSpaces = scanner.drop { $0 == " " || $0 == "\t" }
            if afterSpaces.first == "=" {
                // name=value, for the challenge being read.
                scanner = afterSpaces.dropFirst().drop { $0 == " " || $0 == "\t" }
                let parsedValue: String
                if scanner.first == "\"" {
                    var text = ""
                    var index = scanner.index(after: scanner.startIndex)
                    while index < scanner.endIndex, scanner[index] != "\"" {
                        if scanner[index] == "\\", scanner.index(after: index) < scanner.endIndex {
                            index = scanner.index(after: index)
                        }
                        text.append(scanner[index])
                        index = scanner.index(after: index)
                    }
                    scanner = index < scanner.endIndex ? scanner[scanner.index(after: index)...] : scanner[index...]
                    parsedValue = text
                } else {
                    let raw = scanner.prefix { $0 != "," }
                    scanner = scanner.dropFirst(raw.count)
                    parsedValue = raw.trimmingCharacters(in: .whitespaces)
                }
                current?[token.lowercased()] = parsedValue
            } else {
                // A scheme name starts the next challenge.
                if let current { result.append(current) }
                current = token.lowercased() == "digest" ? [:] : nil
            }
        }
        if let current { result.append(current) }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
