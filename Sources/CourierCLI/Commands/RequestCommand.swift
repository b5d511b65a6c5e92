import ArgumentParser
import Courier
import Foundation

/// `courier [METHOD] URL [ITEM ...]`: builds a request from httpie-style items and sends it
/// (or, with `--offline`, prints it).
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send an HTTP request: courier [METHOD] URL [ITEM ...]",
        usage: "courier [<options>] [METHOD] URL [ITEM ...]\ncourier <subcommand>",
        discussion: """
            METHOD defaults to GET, or POST when there is data.
            URL: ':8080/x' is http://localhost:8080/x; 'example.org' gets http://.
            ITEM:
              Header:Value  a header       Header;   an empty header
              Header:       removes a default header
              name==value   a query parameter
              name=value    a data field (JSON string, or form field)
              name:=json    a raw JSON value          name=@file, name:=@file
              name@file[;type=mime]  a file field     @file  the body from a file
            A backslash escapes a separator character: 'a\\=b=c' is the field "a=b".
            Exit codes: 0 ok, 1 error, 2 timeout, 3/4/5 for 3xx/4xx/5xx with
            --check-status, 6 too many redirects, 130/143 interrupted.
            """,
        helpNames: [.long]
    )

    @Argument(help: "[METHOD] URL [ITEM ...]")
    var arguments: [String] = []

    @Flag(name: [.customShort("j"), .long], help: "Serialize data items as a JSON object (the default).")
    var json = false

    @Flag(
        name: [.customShort("f"), .long],
        help: "Serialize data items as a form; multipart when a file field is present.")
    var form = false

    @Flag(name: .long, help: "Always send multipart/form-data.")
    var multipart = false

    @Option(name: .long, help: "The multipart boundary to use (RFC 2046 characters, 1-70 long).")
    var boundary: String?

    @Option(name: .long, help: "The raw request body.")
    var raw: String?

    @Flag(name: [.customShort("I"), .long], help: "Do not read a request body from stdin.")
    var ignoreStdin = false

    @Option(name: [.customShort("a"), .long], help: "Credentials: user:password (basic), or a token (bearer).")
    var auth: String?

    @Flag(name: .customLong("ignore-netrc"), help: "Do not take credentials from ~/.netrc (or $NETRC).")
    var ignoreNetrc = false

    @Option(
        name: [.customShort("A"), .customLong("auth-type")],
        help: "How --auth is sent: basic (default), digest (answering the server's challenge) or bearer.")
    var authType: String = "basic"

    @Flag(name: [.customShort("F"), .long], help: "Follow redirects.")
    var follow = false

    @Flag(name: .long, help: "With --follow, print each redirect's response and the request after it too (as -v does).")
    var all = false

    @Option(name: .long, help: "The most redirects to follow with --follow.")
    var maxRedirects: Int = 30

    @Option(
        name: .long,
        help: "Seconds to wait for the connection and for each read, as httpie's; exit 2 when exceeded.")
    var timeout: Double?

    @Option(
        name: .customLong("max-time"), help: "Seconds the whole exchange may take, as curl's; exit 2 when exceeded.")
    var maxTime: Double?

    @Option(name: .long, help: "yes, no, or the path of a CA bundle to trust.")
    var verify: String = "yes"

    @Option(name: .long, help: "A PEM client certificate to present (with its private key, unless --cert-key).")
    var cert: String?

    @Option(name: .customLong("cert-key"), help: "The PEM private key of --cert.")
    var certKey: String?

    @Option(
        name: .long,
        help: "PROTOCOL:URL of a proxy for http, https or all URLs (repeatable), over the *_proxy variables.")
    var proxy: [String] = []

    @Flag(name: .customLong("http1.1"), help: "Use HTTP/1.1 only: do not offer HTTP/2 over TLS.")
    var http1 = false

    @Option(
        name: .long,
        help: "The oldest TLS version to accept: tls1.2 (the default), tls1.3, or tls1 and tls1.1 for old servers.")
    var ssl: TLSVersionOption = .tls12

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Past 1 GiB decoded, refuse a compressed body that decodes to more than N bytes per byte received.",
            discussion: "100 by default, which only a decompression bomb exceeds that far; off never refuses.",
            valueName: "N|off"))
    var decompressionRatio: DecompressionRatioOption = DecompressionRatioOption(ratio: 100)

    @Option(name: .long, help: "asynchttpclient (the default) or urlsession: the transport to send through.")
    var transport: TransportChoice = .asyncHTTPClient

    @Flag(
        name: .customLong("http2"),
        help: "Use HTTP/2 over TLS where the server offers it (ALPN), as by default; --http1.1 refuses it.")
    var http2 = false

    @Flag(name: .customLong("path-as-is"), help: "Send /./ and /../ in the URL's path as typed, not squashed.")
    var pathAsIs = false

    @Flag(name: .long, help: "Send the body with Transfer-Encoding: chunked.")
    var chunked = false

    @Flag(name: .long, help: "Exit 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    @Flag(name: .long, help: "Print the request instead of sending it.")
    var offline = false

    @Flag(name: .long, help: "Print the equivalent curl command line instead of sending the request.")
    var curl = false

    @Option(
        name: .long,
        help:
            "Keep headers, auth and cookies between runs in the session NAME (per host) or the file PATH (httpie's format)."
    )
    var session: String?

    @Option(name: .customLong("session-read-only"), help: "Use a session as --session does, without updating it.")
    var sessionReadOnly: String?

    @Option(
        name: [.customShort("p"), .customLong("print")],
        help: "What to print: H request headers, B request body, h response headers, b response body.")
    var printSpec: String?

    @Flag(
        name: [.customShort("v"), .long],
        help: "Print the whole exchange (--print=HBhb); -vv adds its metrics (--print=HBhbm).")
    var verbose: Int

    @Flag(
        name: [.customShort("q"), .long],
        help: "Print nothing but errors and warnings (no body, headers or progress); -qq drops the warnings.")
    var quiet: Int

    @Flag(name: .long, help: "Print only the exchange's metrics: timings, connection, bytes (--print=m).")
    var meta = false

    @Flag(name: [.customShort("h"), .customLong("headers")], help: "Print only the response headers (--print=h).")
    var headersOnly = false

    @Flag(name: [.customShort("b"), .customLong("body")], help: "Print only the response body (--print=b).")
    var bodyOnly = false

    @Option(name: .long, help: "all, colors, format or none (default: all on a terminal, else none).")
    var pretty: String?

    // These three are declared for parsing and help; `FormatOptions.resolve(in:)` reads them
    // from the command line in the order typed, as httpie applies them.
    @Option(
        name: .customLong("format-options"),
        help: ArgumentHelp(
            "How formatted output lays out headers and JSON: headers.sort, json.format, json.indent, json.sort_keys, xml.format, xml.indent (e.g. json.indent:2,headers.sort:false).",
            valueName: "options"))
    var formatOptions: [String] = []

    @Flag(help: "Sort headers and JSON keys in formatted output (the default).")
    var sorted = false

    @Flag(
        help:
            "Keep headers and JSON keys in the order they came (--format-options=headers.sort:false,json.sort_keys:false)."
    )
    var unsorted = false

    @Option(
        name: .customLong("response-mime"),
        help: ArgumentHelp(
            "Format the response body as this type/subtype, whatever its Content-Type.", valueName: "type"))
    var responseMime: String?

    @Option(
        name: .customLong("response-charset"),
        help: ArgumentHelp(
            "Decode the response body from this charset on the terminal, whatever its Content-Type.",
            valueName: "charset"))
    var responseCharset: String?

    @Flag(
        name: [.customShort("d"), .long],
        help: "Download the response body to a file (follows redirects, exits 3/4/5 as --check-status).")
    var download = false

    @Option(
        name: [.customShort("o"), .long],
        help: "With --download, the file to download to; without, the file to print to instead of stdout (- is stdout)."
    )
    var output: String?

    @Flag(name: [.customShort("c"), .customLong("continue")], help: "Resume a partial download (needs --output).")
    var resume = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --download, fetch the file over N ranged connections at once; --continue continues each.",
            valueName: "N"))
    var split: Int?

    @Option(name: .long, help: "Progress bars on stderr: auto, always or never.")
    var progress: String = "auto"

    @Option(name: .long, help: "Keep responses in DIR and reuse them as HTTP caching allows (RFC 9111).")
    var cache: String?

    @Flag(
        name: [.customShort("S"), .long],
        help: "Print the body line by line as it arrives, each line formatted (NDJSON, event streams).")
    var stream = false

    @Flag(
        name: .customLong("resumable"),
        help: ArgumentHelp(
            "Upload @FILE (or < FILE) resumably: tus by default, --resumable=ietf for the IETF draft.",
            discussion:
                "The upload URL goes to stderr and is kept in $XDG_STATE_HOME/courier/uploads; the same command continues it."
        ))
    var resumable = false

    @Option(name: .customLong("resumable-protocol"), help: .hidden)
    var resumableProtocol: ResumableProtocolOption?

    @Option(
        name: .customLong("chunk-size"),
        help: ArgumentHelp(
            "With --resumable, the most bytes per PATCH (e.g. 100M); the whole file by default.", valueName: "bytes"))
    var chunkSize: ChunkSizeOption?

    func validate() throws {
        if resumableProtocol != nil && !resumable { throw ValidationError("--resumable-protocol needs --resumable") }
        if chunkSize != nil && !resumable { throw ValidationError("--chunk-size needs --resumable") }
        if resumable && (download || offline || curl || stream) {
            throw ValidationError("--resumable uploads; use it without --download, --offline, --curl and --stream")
        }
        if [json, form, multipart].filter({ $0 }).count > 1 {
            throw ValidationError("use only one of --json, --form and --multipart")
        }
        if maxRedirects < 0 { throw ValidationError("--max-redirects must not be negative") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds") }
        if let maxTime, !(maxTime > 0) { throw ValidationError("--max-time must be a positive number of seconds") }
        if resume && (output == nil || !download) { throw ValidationError("--continue needs --download and --output") }
        if let split {
            if !download { throw ValidationError("--split needs --download") }
            if !(1...64).contains(split) { throw ValidationError("--split takes 1 to 64 connections") }
        }
        if download && output == "-" {
            throw ValidationError("--download saves a file; leave it out to write the body to stdout (-o -)")
        }
        if http1 && http2 { throw ValidationError("use only one of --http1.1 and --http2") }
        if certKey != nil && cert == nil { throw ValidationError("--cert-key needs --cert") }
        if session != nil && sessionReadOnly != nil {
            throw ValidationError("use only one of --session and --session-read-only")
        }
        switch authType.lowercased() {
        case "basic", "digest":
            // `-a user` without a password is asked for on the terminal when the request is made.
            break
        case "bearer":
            if auth == nil { throw ValidationError("--auth-type bearer needs the token in --auth") }
        default:
            throw ValidationError("--auth-type \"\(authType)\": expected basic, digest or bearer")
        }
    }

    func run() async throws {
        var terminal = Terminal.current()
        // `-o -` is stdout, as in curl and httpie (argparse's FileType).
        if let output, !download, output != "-" {
            try StandardStreams.redirectOut(toFile: output)
            terminal.stdoutIsTerminal = false
        }
        let outputOptions = try OutputOptions.resolve(
            print: quiet > 0
                ? "" : OutputOptions.lastPrintChoice(in: Array(CommandLine.arguments.dropFirst())) ?? printSpec,
            verbose: verbose, headersOnly: headersOnly, bodyOnly: bodyOnly,
            offline: offline,
            stdoutIsTerminal: terminal.stdoutIsTerminal, meta: meta)
        let prettyOption = try PrettyOption.resolve(pretty, stdoutIsTerminal: terminal.stdoutIsTerminal)
        let progressOption = try ProgressOption.parse(progress)

        let positionals = try Positionals.parse(arguments)
        let stdinBody = (ignoreStdin || terminal.stdinIsTerminal) ? nil : try StandardInput.body()
        let planner = RequestPlanner(
            mode: multipart ? .multipart : (form ? .form : .json), boundary: boundary, rawArgument: raw,
            stdinBody: stdinBody, keepsDotSegments: pathAsIs)
        var plan = try planner.plan(positionals: positionals)
        plan.explicitJSON = json
        let itemHeaders = plan.headers
        let sessionState = try (session ?? sessionReadOnly).map {
            try CLISessionState(value: $0, readOnly: sessionReadOnly != nil, url: plan.url)
        }
        let credentials = try Credentials.resolve(
            auth: auth, authType: authType, ignoresNetrc: ignoreNetrc, asksForPassword: !curl, session: sessionState,
            plan: &plan)
        var request = try RequestAssembler(auth: credentials.basic, maxTime: maxTime).request(for: plan)
        if let jar = sessionState?.jar, let stored = jar.cookieHeaderValue(for: request.url) {
            if let given = request.value(forHTTPHeaderField: "Cookie") {
                try? request.setValue(
                    CLISessionState.mergedCookies(stored: stored, given: given), forHTTPHeaderField: "Cookie")
            } else if curl || offline {
                // Sent by the session's cookie storage when online; shown here as it would go out.
                try? request.setValue(stored, forHTTPHeaderField: "Cookie")
            }
        }
        let printer = MessagePrinter(
            pretty: prettyOption, stdoutIsTerminal: terminal.stdoutIsTerminal,
            format: try FormatOptions.resolve(in: Array(CommandLine.arguments.dropFirst())),
            responseDisplay: try ResponseDisplayType.parse(mime: responseMime, charset: responseCharset))
        // A malformed --proxy is a usage error even when nothing is sent (--offline, --curl), as
        // any other malformed option is; the environment is read only when a request goes out.
        if !proxy.isEmpty { _ = try ProxyOption.resolve(proxy, environment: [:]) }

        // Compressed bodies are asked for and decoded unless this is a download (the bytes as
        // stored) or a header item `Accept-Encoding:` removed the header.
        let removesAcceptEncoding =
            itemHeaders.last { $0.name.lowercased() == "accept-encoding" }.map { $0.value == nil } ?? false
        let asksForCompression = !download && !removesAcceptEncoding
        if curl {
            let options = CurlOptions(
                follow: follow || download, maxRedirects: maxRedirects, verify: verify, certificate: cert,
                certificateKey: certKey, http1Only: http1, proxies: proxy, scheme: request.url.scheme ?? "http",
                compressed: asksForCompression && request.value(forHTTPHeaderField: "Accept-Encoding") == nil,
                download: download, outputPath: output, resume: resume, pathAsIs: pathAsIs, digest: credentials.digest,
                idleTimeout: timeout)
            let chunkedHeader = chunked ? ["-H", "Transfer-Encoding: chunked"] : []
            try StandardStreams.writeOut(request.curlDescription(adding: chunkedHeader + options.arguments) + "\n")
            return
        }
        if resumable {
            let upload = ResumableUploadCommand(
                request: request, file: try ResumableOption.file(of: plan),
                uploadProtocol: resumableProtocol?.uploadProtocol ?? .tus,
                chunkSize: chunkSize?.bytes,
                connection: ConnectionOptions(
                    verify: verify, certificate: cert, certificateKey: certKey, http1Only: http1, http2: http2,
                    minimumTLSVersion: ssl, proxies: proxy, transport: transport, idleTimeout: timeout),
                showsProgress: quiet == 0 && progressOption.enabled(stderrIsTerminal: terminal.stderrIsTerminal),
                reports: quiet == 0)
            let status = try await upload.run(interrupts: InterruptWatch())
            if status != .success { throw CommandExit(code: status.rawValue) }
            return
        }
        if offline {
            if asksForCompression { Exchange.asksForCompression(in: &request) }
            try await Self.printRequest(request, printer: printer, options: outputOptions, chunked: chunked)
            return
        }
        if let cache { try CacheOption.use(directory: cache, for: &request, downloading: download) }
        // Download mode follows redirects and checks the status, as httpie's: a file is saved
        // only from a 2xx, and anything else must not look like success.
        let exchange = Exchange(
            request: request, printer: printer, output: outputOptions, follow: follow || download,
            maxRedirects: maxRedirects,
            connection: ConnectionOptions(
                verify: verify, certificate: cert, certificateKey: certKey, http1Only: http1, http2: http2,
                minimumTLSVersion: ssl, decompressionRatio: decompressionRatio.ratio, proxies: proxy,
                transport: transport, idleTimeout: timeout, maxTime: maxTime),
            chunked: chunked, checkStatus: checkStatus || download, download: download,
            outputPath: output, resume: resume,
            showProgress: quiet == 0 && progressOption.enabled(stderrIsTerminal: terminal.stderrIsTerminal),
            cookieStorage: sessionState?.jar, stream: stream, asksForCompression: asksForCompression,
            warnsOfStatus: quiet < 2, reportsSaving: quiet == 0, digestCredentials: credentials.digest,
            showsRedirects: all || verbose > 0, split: split)
        let status = try await exchange.run(interrupts: InterruptWatch())
        if outputOptions.metadata, let metrics = MetricsCapture.shared.latest {
            let section = MetricsPrinter().text(for: metrics, finished: .now)
            let separated = outputOptions.responseBody || outputOptions.responseHeaders
            try StandardStreams.writeOut(separated ? "\n" + section : section)
        }
        try sessionState?.save(headerItems: itemHeaders, auth: credentials.forSession, url: plan.url)
        if status != .success { throw CommandExit(code: status.rawValue) }
    }

    /// Prints the request as `--offline` and `-v` show it. A one-shot body that is about to be
    /// `sending` (stdin streamed) can be read only once, so a note stands in for it.
    static func printRequest(
        _ request: Request, printer: MessagePrinter, options: OutputOptions, chunked: Bool, sending: Bool = false
    ) async throws {
        if options.requestHeaders { try StandardStreams.writeOut(printer.requestHead(request, chunked: chunked)) }
        if options.requestBody, !request.body.isEmpty, sending, !request.body.isReplayable {
            try StandardStreams.writeOut(MessagePrinter.streamedNote + "\n")
        } else if options.requestBody, !request.body.isEmpty {
            do {
                try await printer.writeBody(
                    request.body.makeChunks(), contentType: request.value(forHTTPHeaderField: "Content-Type"))
            } catch let error as CourierError {
                throw CLIError.failure(error.message)
            }
        }
    }
}
