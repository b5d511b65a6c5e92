import Foundation
import NIOCore
import NIOPosix

/// The client side of one proxy connection: reads the request head, answers or connects to the
/// target, then relays bytes both ways until either side closes.
final class ProxyFrontHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case readingHead(ByteBuffer)
        case connecting(pending: [ByteBuffer])
        case relaying(any Channel)
        case closed
    }

    private static let headLimit = 64 * 1024
    private let log: ProxyLog
    private var state = State.readingHead(ByteBuffer())

    init(log: ProxyLog) {
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        switch state {
        case .readingHead(var buffer):
            var bytes = bytes
            buffer.writeBuffer(&bytes)
            state = .readingHead(buffer)
            readHeadIfComplete(context: context, buffer: buffer)
        case .connecting(var pending):
            pending.append(bytes)
            state = .connecting(pending: pending)
        case .relaying(let peer):
            peer.writeAndFlush(bytes, promise: nil)
        case .closed:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .relaying(let peer) = state { peer.close(promise: nil) }
        state = .closed
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func readHeadIfComplete(context: ChannelHandlerContext, buffer: ByteBuffer) {
        let view = buffer.readableBytesView
        guard let end = Self.headEnd(in: view) else {
            if buffer.readableBytes > Self.headLimit { answer(context: context, status: 431, record: nil) }
            return
        }
        let headText = String(decoding: view[view.startIndex..<end], as: UTF8.self)
        var rest = buffer
        rest.moveReaderIndex(forwardBy: end - view.startIndex + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let headers: [[String]] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return [
                String(line[..<colon]),
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces),
            ]
        }
        guard requestLine.count == 3 else {
            answer(context: context, status: 400, record: nil)
            return
        }
        var record = TestForwardProxy.Record(
            method: requestLine[0], target: requestLine[1],
            proxyAuthorization: headers.first { $0[0].lowercased() == "proxy-authorization" }?[1], headers: headers,
            proxyStatus: nil)
        if let expected = log.expectedAuthorization, record.proxyAuthorization != expected {
            answer(context: context, status: 407, record: record)
            return
        }
        guard let target = ProxyTarget(method: record.method, target: record.target) else {
            answer(context: context, status: 400, record: record)
            return
        }
        guard target.isLoopback else {
            answer(context: context, status: 403, record: record)
            return
        }
        let tunnel = record.method == "CONNECT"
        if tunnel { record.proxyStatus = 200 }
        log.record(record)
        var first = context.channel.allocator.buffer(capacity: rest.readableBytes + 256)
        if !tunnel {
            first.writeString("\(record.method) \(target.originForm) \(requestLine[2])\r\n")
            let dropped: Set<String> = ["proxy-authorization", "proxy-connection", "connection", "keep-alive"]
            for header in headers where !dropped.contains(header[0].lowercased()) {
                first.writeString("\(header[0]): \(header[1])\r\n")
            }
            first.writeString("Connection: close\r\n\r\n")
        }
        first.writeBuffer(&rest)
        state = .connecting(pending: first.readableBytes > 0 ? [first] : [])
        connect(context: context, to: target, tunnel: tunnel)
    }

    private func connect(context: ChannelHandlerContext, to target: ProxyTarget, tunnel: Bool) {
        let front = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { peer in
                peer.eventLoop.makeCompletedFuture {
                    try peer.pipeline.syncOperations.addHandler(ProxyBackHandler(front: front))
                }
            }
            .connect(host: target.host, port: target.port)
            .whenComplete { result in
                let (handler, context) = loopBound.value
                handler.connected(result, context: context, tunnel: tunnel)
            }
    }

    private func connected(_ result: Result<any Channel, any Error>, context: ChannelHandlerContext, tunnel: Bool) {
        guard case .connecting(let pending) = state else {
            if case .success(let peer) = result { peer.close(promise: nil) }
            return
        }
        switch result {
        case .failure:
            answer(context: context, status: 502, record: nil)
        case .success(let peer):
            self.log.opened(peer)
            state = .relaying(peer)
            if tunnel {
                let established = context.channel.allocator.buffer(
                    string: "HTTP/1.1 200 Connection Established\r\n\r\n")
                context.writeAndFlush(wrapOutboundOut(established), promise: nil)
            }
            for bytes in pending { peer.write(bytes, promise: nil) }
            peer.flush()
        }
    }

    /// Answers with `status` itself and closes the connection.
    private func answer(context: ChannelHandlerContext, status: Int, record: TestForwardProxy.Record?) {
        if var record {
            record.proxyStatus = status
            log.record(record)
        }
        let reason =
            [
                400: "Bad Request", 403: "Forbidden", 407: "Proxy Authentication Required", 431: "Too Large",
                502: "Bad Gateway",
            ][
                status] ?? "Error"
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: 0\r\nConnection: close\r\n"
        if status == 407 { head += "Proxy-Authenticate: Basic realm=\"courier-test-proxy\"\r\n" }
        head += "\r\n"
        state = .closed
        let buffer = context.channel.allocator.buffer(string: head)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    private static func headEnd(in view: ByteBufferView) -> Int? {
        guard view.count >= 4 else { return nil }
        var index = view.startIndex
        while index + 3 < view.endIndex {
            if view[index] == 13, view[index + 1] == 10, view[index + 2] == 13, view[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }
}

/// The target side of one proxy connection: what the target sends goes back to the client.
final class ProxyBackHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let front: any Channel

    init(front: any Channel) {
        self.front = front
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        front.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        front.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Where a proxied request goes: from `CONNECT host:port` or an absolute `http://` target.
struct ProxyTarget {
    var host: String
    var port: Int
    /// The path and query to send to the origin (absolute form only).
    var originForm: String

    init?(method: String, target: String) {
        if method == "CONNECT" {
            guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
                return nil
            }
            var host = String(target[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.init(host: host, port: port, originForm: "")
            return
        }
        guard let components = URLComponents(string: target), components.scheme?.lowercased() == "http",
            var host = components.host
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
        self.init(host: host, port: components.port ?? 80, originForm: path + query)
    }

    private init(host: String, port: Int, originForm: String) {
        self.host = host
        self.port = port
        self.originForm = originForm
    }

    /// 127.0.0.0/8, ::1 and localhost: the only targets tests may reach.
    var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
