/// The curl options that carry what courier's own options do outside the request, so that
/// `--curl` prints a command that behaves as the exchange would: redirects, trust, client
/// certificates, the protocol, a proxy, compression and where a download goes.
struct CurlOptions {
    var follow = false
    var maxRedirects = 30
    /// `--verify`: yes, no, or a CA bundle path.
    var verify = "yes"
    var certificate: String?
    var certificateKey: String?
    var http1Only = false
    /// The `--proxy PROTOCOL:URL` options as typed; curl reads the `*_proxy` variables itself.
    var proxies: [String] = []
    /// The scheme of the request's URL, which picks the proxy.
    var scheme = "http"
    /// Whether courier asks for gzip and deflate and decodes them (`--compressed`).
    var compressed = true
    var download = false
    var outputPath: String?
    var resume = false
    /// `--path-as-is`: curl squashes dot segments too unless told the same.
    var pathAsIs = false
    /// `-A digest` credentials: curl answers the challenge itself with `--digest -u`.
    var digest: (user: String, password: String)?
    /// `--timeout`: for curl, a connect timeout and an abort when under a byte a second for as
    /// long (`--speed-time` takes whole seconds, so it is rounded up).
    var idleTimeout: Double?

    /// The arguments, in the order curl's manual lists them.
    var arguments: [String] {
        var words: [String] = []
        if follow { words += ["-L", "--max-redirs", String(maxRedirects)] }
        switch verify.lowercased() {
        case "yes", "true", "1": break
        case "no", "false", "0": words.append("-k")
        default: words += ["--cacert", verify]
        }
        if let certificate { words += ["--cert", certificate] }
        if let certificateKey { words += ["--key", certificateKey] }
        if http1Only { words.append("--http1.1") }
        if pathAsIs { words.append("--path-as-is") }
        if let proxy = proxy() { words += proxy.isEmpty ? ["--noproxy", "*"] : ["-x", proxy] }
        if let digest { words += ["--digest", "-u", "\(digest.user):\(digest.password)"] }
        if let idleTimeout {
            let seconds = String(Int(min(idleTimeout, 1e9).rounded(.up)))
            words += ["--connect-timeout", String(idleTimeout), "--speed-limit", "1", "--speed-time", seconds]
        }
        if compressed { words.append("--compressed") }
        if download {
            // Without -o, courier names the file from Content-Disposition or the URL, as -O -J do.
            words += outputPath.map { ["-o", $0] } ?? ["-O", "-J"]
            if resume { words += ["-C", "-"] }
        }
        return words
    }

    /// The last `--proxy` for the request's scheme (or `all`); "" when it sends the scheme direct.
    private func proxy() -> String? {
        var chosen: String?
        for option in proxies {
            guard let colon = option.firstIndex(of: ":") else { continue }
            let protocolName = option[..<colon].lowercased()
            if protocolName == scheme.lowercased() || protocolName == "all" {
                chosen = String(option[option.index(after: colon)...])
            }
        }
        return chosen
    }
}
