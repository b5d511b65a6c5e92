import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

/// `SessionTask.currentRequest` is the request as it last went out: the original one until an
/// adapter, a redirect or resume headers change it. (The task stores a new value only when one
/// of them did, so these pin each case.)
@Suite("Session: the current request", .timeLimit(.minutes(3)))
struct CurrentRequestTests {
    @Test func aPlainRequestStaysTheOriginal() async throws {
        try await withScriptedSession { server, manager, _ in
            let request = Request(url: server.url("/get"), headerFields: [.accept: "application/json"])
            let task = manager.dataTask(with: request)
            task.resume()
            let response = try await task.response()
            #expect(task.currentRequest.url == request.url)
            #expect(task.currentRequest.headerFields == request.headerFields)
            #expect(response.request.url == request.url)
        }
    }

    @Test func aRedirectMakesTheTargetCurrent() async throws {
        try await withScriptedSession { server, manager, _ in
            let task = manager.dataTask(with: Request(url: server.url("/redirect-to?url=/get&status_code=302")))
            task.resume()
            let response = try await task.response()
            #expect(task.currentRequest.url.path == "/get")
            #expect(response.request.url.path == "/get")
            #expect(task.originalRequest.url.path == "/redirect-to")
        }
    }

    @Test func anAdaptedRequestIsCurrent() async throws {
        try await withScriptedSession(interceptor: RedirectAndHookTests.TokenAdapter()) { server, manager, _ in
            let task = manager.dataTask(with: Request(url: server.url("/get")))
            task.resume()
            let response = try await task.response()
            #expect(task.currentRequest.headerFields[.authorization] == "Bearer token")
            #expect(response.request.headerFields[.authorization] == "Bearer token")
            #expect(task.originalRequest.headerFields[.authorization] == nil)
        }
    }

    @Test func aResumedDownloadSendsItsRangeAsTheCurrentRequest() async throws {
        try await withScriptedSession { server, manager, directory in
            let size = 5000
            let partial = directory.appendingPathComponent("partial.download")
            try Data(TestServer.expectedRangeBytes(count: size).prefix(1000)).write(to: partial)
            let resumeData = ResumeData(
                url: server.url("/range/\(size)"), bytesWritten: 1000, entityTag: "\"range\(size)\"",
                lastModified: nil, partialFileURL: partial)
            let destination = directory.appendingPathComponent("whole.bin")
            let task = manager.downloadTask(
                with: Request(url: resumeData.url), resumingFrom: resumeData, destination: { _, _ in destination })
            task.resume()
            let response = try await task.response()
            #expect(task.currentRequest.headerFields[.range] == "bytes=1000-")
            #expect(task.currentRequest.headerFields[.ifRange] == "\"range\(size)\"")
            #expect(task.originalRequest.headerFields[.range] == nil)
            #expect(
                try Data(contentsOf: try #require(response.fileURL)) == Data(TestServer.expectedRangeBytes(count: size))
            )
        }
    }
}

@Suite struct SessionResponseValueTests {
    @Test func settingOneFieldKeepsTheOthersAndLeavesCopiesAlone() throws {
        let url = try #require(URL(string: "http://127.0.0.1/get"))
        let head = ResponseHead(status: .ok, headerFields: [.contentType: "text/plain"], url: url)
        let original = SessionResponse(request: Request(url: url), response: head, data: Data("abc".utf8))
        var changed = original
        changed.data = Data("xyz".utf8)
        changed.fileURL = URL(fileURLWithPath: "/tmp/file")
        changed.response.status = .notFound
        changed.request.method = .post

        #expect(changed.data == Data("xyz".utf8))
        #expect(changed.fileURL?.path == "/tmp/file")
        #expect(changed.response.statusCode == 404)
        #expect(changed.response.headerFields[.contentType] == "text/plain")
        #expect(changed.request.method == .post)
        #expect(changed.request.url == url)

        #expect(original.data == Data("abc".utf8))
        #expect(original.fileURL == nil)
        #expect(original.response.statusCode == 200)
        #expect(original.request.method == .get)
    }
}
