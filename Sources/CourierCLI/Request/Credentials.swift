import Foundation

/// The credentials a request carries, chosen as httpie chooses them: `-a` with `-A` first, then
/// the session's (when the command gives none, no `Authorization` item and no user-info in the
/// URL), then the host's entry in `.netrc`.
struct Credentials {
    /// Sent up front as Basic (by ``RequestAssembler``).
    var basic: (user: String, password: String)?
    /// Answered to the server's challenge (a `DigestAuthenticator`), never sent up front.
    var digest: (user: String, password: String)?
    /// Sent as `Authorization: Bearer …`, over an `Authorization` item.
    var bearerToken: String?
    /// What a session keeps of the command's own `-a`: its type and text, as httpie writes it.
    var forSession: (type: String, raw: String)?

    /// Resolves the credentials for `plan` and puts the session's headers (and a bearer
    /// token's) into its headers; `asksForPassword` lets `-a user` alone ask on the terminal.
    /// - Throws: ``CLIError`` when a password is asked for and cannot be.
    static func resolve(
        auth: String?, authType: String, ignoresNetrc: Bool, asksForPassword: Bool, session: CLISessionState?,
        plan: inout RequestPlan
    ) throws -> Credentials {
        let itemHeaders = plan.headers
        let type = authType.lowercased()
        var result = Credentials()
        if type == "bearer" {
            result.bearerToken = auth
        } else if let auth {
            let parts = auth.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            var pair = (user: String(parts.first ?? ""), password: parts.count > 1 ? String(parts[1]) : "")
            if parts.count == 1, asksForPassword {
                // As httpie: `-a user` alone asks for the password on the terminal.
                let url = plan.url
                let host = url.host.map { host in url.port.map { "\(host):\($0)" } ?? host } ?? ""
                pair.password = try PasswordPrompt.ask(user: pair.user, host: host)
            }
            if type == "digest" { result.digest = pair } else { result.basic = pair }
        }
        result.forSession =
            result.bearerToken.map { (type: "bearer", raw: $0) }
            ?? (result.digest ?? result.basic).map {
                (type: type == "digest" ? "digest" : "basic", raw: "\($0.user):\($0.password)")
            }

        if let session {
            let commandHasAuth =
                result.basic != nil || result.digest != nil || result.bearerToken != nil || plan.url.user != nil
                || itemHeaders.contains { $0.name.lowercased() == "authorization" }
            let stored = session.auth(commandHasAuth: commandHasAuth)
            if let basic = stored.basic { result.basic = basic }
            if let digest = stored.digest { result.digest = digest }
            plan.headers = session.headers(before: itemHeaders + (stored.header.map { [$0] } ?? []))
        }
        if !ignoresNetrc, result.basic == nil, result.digest == nil, result.bearerToken == nil, plan.url.user == nil,
            !plan.headers.contains(where: { $0.name.lowercased() == "authorization" }), let host = plan.url.host,
            let fromNetrc = Netrc.load()?.credentials(for: host)
        {
            // As requests (so httpie) does: a request without credentials of its own takes the
            // host's, sent as the auth type asks.
            if type == "digest" { result.digest = fromNetrc } else { result.basic = fromNetrc }
        }
        if let token = result.bearerToken {
            // Like -a's Basic credentials, the token wins over an Authorization item.
            plan.headers =
                plan.headers.filter { $0.name.lowercased() != "authorization" } + [("Authorization", "Bearer \(token)")]
        }
        return result
    }
}
