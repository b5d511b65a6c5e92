import Courier
import CourierOpenAPI
import CourierOpenAPIExample
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@Suite("CourierOpenAPI: per-operation policies and the session's own", .timeLimit(.minutes(3)))
struct OperationPolicyTests {
    @Test("an operation's fields win, the default fills what it leaves nil, unlisted operations get the default")
    func policyLookup() {
        let configuration = CourierClientTransport.Configuration(
            operations: ["getUser": .init(timeout: .seconds(5))],
            defaultPolicy: .init(timeout: .seconds(30), retry: RetryPolicy(retryLimit: 1), maximumRedirects: 2))
        let getUser = configuration.policy(for: "getUser")
        #expect(getUser.timeout == .seconds(5))
        #expect((getUser.retry as? RetryPolicy)?.retryLimit == 1)
        #expect(getUser.maximumRedirects == 2)
        let other = configuration.policy(for: "listUsers")
        #expect(other.timeout == .seconds(30))
        #expect(CourierClientTransport.Configuration().policy(for: "x").timeout == nil)
    }

    @Test("an operation's timeout bounds that operation only")
    func timeout() async throws {
        try await withServer { server in
            let transport = CourierClientTransport(
                configuration: .init(operations: ["slow": .init(timeout: .milliseconds(300))]))
            await expectCourierError(.timedOut) {
                try await transport.send(.get, "/delay/5", baseURL: server.baseURL, operationID: "slow")
            }
            let (response, _) = try await transport.send(
                .get, "/delay/0.5", baseURL: server.baseURL, operationID: "patient")
            #expect(response.status == .ok)
        }
    }

    @Test("an operation's redirect limit: over it is tooManyRedirects, other operations follow the manager's")
    func redirectLimit() async throws {
        try await withServer { server in
            let transport = CourierClientTransport(
                configuration: .init(operations: ["strict": .init(maximumRedirects: 1)]))
            await expectCourierError(.tooManyRedirects) {
                try await transport.send(.get, "/redirect/3", baseURL: server.baseURL, operationID: "strict")
            }
            let (response, _) = try await transport.send(
                .get, "/redirect/3", baseURL: server.baseURL, operationID: "lenient")
            #expect(response.status == .ok)
        }
    }

    @Test("an operation's retry resends a .multiple body after a 503; without it, the 503 is the answer")
    func retryReplaysBody() async throws {
        try await withServer { server in
            let transport = CourierClientTransport(
                configuration: .init(operations: [
                    "putFlaky": .init(retry: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.001))
                ]))
            for size in [20, 200_000] {
                let body = ExampleTour.generatedBody(count: size, chunkSize: 4096)
                let (response, answer) = try await transport.send(
                    .put, "/fault/flaky?id=retry-\(size)&failures=1", body: body, baseURL: server.baseURL,
                    operationID: "putFlaky")
                #expect(response.status == .ok)
                let echo = try await jsonObject(answer)
                #expect(echo["attempt"] as? Int == 2)
                // Bytes that are not UTF-8 come back as a base64 data URL, as httpbin sends them.
                let data = try #require(echo["data"] as? String)
                let prefix = "data:application/octet-stream;base64,"
                let received =
                    data.hasPrefix(prefix)
                    ? [UInt8](Data(base64Encoded: String(data.dropFirst(prefix.count))) ?? Data()) : Array(data.utf8)
                #expect(received == (0..<size).map(ExampleTour.patternByte(at:)))
            }
            let (unretried, _) = try await transport.send(
                .put, "/fault/flaky?id=no-retry&failures=1", body: HTTPBody("x"), baseURL: server.baseURL,
                operationID: "other")
            #expect(unretried.status == .serviceUnavailable)
        }
    }

    @Test("a .single body is not retried: the 503 comes back and the server saw one attempt")
    func oneShotBodyNotRetried() async throws {
        try await withServer { server in
            let transport = CourierClientTransport(
                configuration: .init(defaultPolicy: .init(retry: RetryPolicy(exponentialBackoffScale: 0.001))))
            let body = ExampleTour.generatedBody(count: 50_000, iterationBehavior: .single)
            let (response, _) = try await transport.send(
                .put, "/fault/flaky?id=single&failures=1", body: body, baseURL: server.baseURL)
            #expect(response.status == .serviceUnavailable)
            #expect(server.stats.recentRequestHeads.filter { $0.uri.hasPrefix("/fault/flaky") }.count == 1)
        }
    }

    @Test("a given manager's cookies and interceptor apply to operations")
    func managerPoliciesApply() async throws {
        struct Tagger: RequestInterceptor {
            func adapt(_ request: Request) async throws -> Request {
                var request = request
                try request.setValue("adapted", forHTTPHeaderField: "X-Adapter")
                return request
            }
        }
        try await withServer { server in
            let manager = SessionManager(interceptor: Tagger())
            _ = try await manager.data(for: Request(url: server.url("/cookies/set?flavour=oat")))
            let transport = CourierClientTransport(manager: manager)
            let (_, body) = try await transport.send(.get, "/get", baseURL: server.baseURL)
            let headers = try #require(try await jsonObject(body)["headers"] as? [String: String])
            #expect(headers["Cookie"] == "flavour=oat")
            #expect(headers["X-Adapter"] == "adapted")
        }
    }

    @Test("an operation's retrier is asked before the manager's, which still decides when it declines")
    func retrierOrder() async throws {
        struct Counting: RequestRetrier {
            let calls: AsyncStream<String>.Continuation
            let name: String
            let decision: RetryDecision
            func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
                -> RetryDecision
            {
                calls.yield(name)
                return retryCount == 0 ? decision : .doNotRetry
            }
        }
        struct ManagerRetrier: RequestInterceptor {
            let inner: Counting
            func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
                -> RetryDecision
            { await inner.retry(request, response: response, error: error, retryCount: retryCount) }
        }
        try await withServer { server in
            let (calls, continuation) = AsyncStream<String>.makeStream()
            let manager = SessionManager(
                interceptor: ManagerRetrier(inner: Counting(calls: continuation, name: "manager", decision: .retry)))
            let transport = CourierClientTransport(
                manager: manager,
                configuration: .init(
                    defaultPolicy: .init(
                        retry: Counting(calls: continuation, name: "operation", decision: .doNotRetry))))
            let (response, _) = try await transport.send(
                .get, "/fault/flaky?id=order&failures=1", baseURL: server.baseURL)
            continuation.finish()
            #expect(response.status == .ok)
            var order: [String] = []
            for await call in calls { order.append(call) }
            #expect(order == ["operation", "manager"])
        }
    }
}
