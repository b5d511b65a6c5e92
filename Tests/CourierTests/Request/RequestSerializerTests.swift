import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The body bytes of a request held in memory, as text.
func bodyText(_ request: Request) -> String? {
    request.body.bufferedBytes.map { String(buffer: $0) }
}

struct TestSerializerError: Error, Equatable {}

@Suite struct HTTPRequestSerializerTests {
    @Test func postPutsParametersInAFormBody() throws {
        let request = try HTTPRequestSerializer().request(
            method: .post, urlString: "http://example.com", parameters: ["key": "value"])
        #expect(bodyText(request) == "key=value")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.url.absoluteString == "http://example.com")
        #expect(request.method == .post)
    }

    @Test func postWithoutParametersHasAnEmptyFormBody() throws {
        let request = try HTTPRequestSerializer().request(
            method: .post, urlString: "http://example.com", parameters: nil)
        #expect(request.body.bufferedBytes?.readableBytes == 0)
        #expect(request.body.contentLength == 0)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func postKeepsAContentTypeAlreadySet() throws {
        var serializer = HTTPRequestSerializer()
        serializer.setValue("text/plain", forHTTPHeaderField: "content-type")
        let request = try serializer.request(method: .put, urlString: "http://example.com", parameters: ["a": "b"])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(request.headerFields[values: .contentType] == ["text/plain"])
        #expect(bodyText(request) == "a=b")
    }

    @Test func getPutsParametersInTheQuery() throws {
        let serializer = HTTPRequestSerializer()
        let request = try serializer.request(
            method: .get, urlString: "http://example.com", parameters: ["key": "value"])
        #expect(request.url.query == "key=value")
        #expect(request.body.isEmpty)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func getWithEmptyParametersAddsNoQuestionMark() throws {
        let request = try HTTPRequestSerializer().request(
            method: .get, urlString: "http://example.com", parameters: [:])
        #expect(request.url.absoluteString == "http://example.com")
        let none = try HTTPRequestSerializer().request(method: .get, urlString: "http://example.com/a", parameters: nil)
        #expect(none.url.absoluteString == "http://example.com/a")
    }

    @Test func existingQueryGetsAnAmpersandAndFragmentsStayLast() throws {
        let serializer = HTTPRequestSerializer()
        let withQuery = try serializer.request(
            method: .get, urlString: "http://example.com/p?x=1", parameters: ["y": 2])
        #expect(withQuery.url.absoluteString == "http://example.com/p?x=1&y=2")
        let withFragment = try serializer.request(
            method: .get, urlString: "http://example.com/p#top", parameters: ["y": 2])
        #expect(withFragment.url.absoluteString == "http://example.com/p?y=2#top")
    }

    @Test func reservedAndEscapedValuesInTheQuery() throws {
        let serializer = HTTPRequestSerializer()
        let reserved = try serializer.request(
            method: .get, urlString: "http://example.com", parameters: ["key": " :#[]@!$&'()*+,;=/?"])
        #expect(reserved.url.query == "key=%20%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D/?")
        let escaped = try serializer.request(
            method: .get, urlString: "http://example.com",
            parameters: ["key": "%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%2F"])
        #expect(escaped.url.query == "key=%2520%2521%2522%2523%2524%2525%2526%2527%2528%2529%252A%252B%252C%252F")
    }

    @Test func emojiBatchInTheQuery() throws {
        var parameter = "!"
        while parameter.utf16.count < 50 { parameter += "👴🏿👷🏻👮🏽" }
        let request = try HTTPRequestSerializer().request(
            method: .get, urlString: "http://test.com", parameters: ["test": .string(parameter)])
        let group = "%F0%9F%91%B4%F0%9F%8F%BF%F0%9F%91%B7%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD"
        #expect(request.url.query == "test=%21" + String(repeating: group, count: 5))
        #expect(request.url.query?.removingPercentEncoding == "test=" + parameter)
    }

    @Test func uriMethodsAreConfigurableAndCaseInsensitive() throws {
        var serializer = HTTPRequestSerializer()
        #expect(serializer.encodesParametersInURI(.delete))
        #expect(serializer.encodesParametersInURI(.head))
        #expect(!serializer.encodesParametersInURI(.post))
        #expect(serializer.encodesParametersInURI(try HTTPMethod(validating: "get")))
        serializer.methodsEncodingParametersInURI = ["post"]
        let post = try serializer.request(method: .post, urlString: "http://x.test/", parameters: ["a": 1])
        #expect(post.url.absoluteString == "http://x.test/?a=1")
        #expect(post.body.isEmpty)
        let get = try serializer.request(method: .get, urlString: "http://x.test/", parameters: ["a": 1])
        #expect(bodyText(get) == "a=1")
    }

    @Test func customQueryClosure() throws {
        var serializer = HTTPRequestSerializer()
        serializer.setQueryStringSerialization { _, parameters in
            parameters.sorted { $0.key < $1.key }.map { "\($0.key)**\($0.value.formText ?? "")" }.joined()
        }
        let request = try serializer.request(
            method: .get, urlString: "http://example.com", parameters: ["key": "value"])
        #expect(request.url.query == "key**value")
        let post = try serializer.request(method: .post, urlString: "http://example.com", parameters: ["key": "value"])
        #expect(bodyText(post) == "key**value")
    }

    @Test func customQueryClosureErrorReachesTheCallerUnchanged() {
        var serializer = HTTPRequestSerializer()
        serializer.setQueryStringSerialization { _, _ in throw TestSerializerError() }
        #expect(throws: TestSerializerError()) {
            try serializer.request(method: .get, urlString: "url", parameters: [:])
        }
    }

    @Test func invalidURLStringIsATypedErrorQuotingIt() {
        for bad in ["", "http://exa mple.com", "http://[::1"] {
            do {
                _ = try HTTPRequestSerializer().request(method: .get, urlString: bad, parameters: nil)
                Issue.record("expected an error for \(bad)")
            } catch let error as CourierError {
                #expect(error.code == .invalidURL)
                #expect(error.offendingInput == bad)
                #expect(error.message.contains("\"\(bad)\""))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    /// Foundation's URL parser escapes what a custom closure left unescaped rather than failing.
    @Test func customQueryWithASpaceIsEscapedByTheURLParser() throws {
        var serializer = HTTPRequestSerializer()
        serializer.setQueryStringSerialization { _, _ in "a b" }
        let request = try serializer.request(method: .get, urlString: "http://x.test", parameters: ["k": "v"])
        #expect(request.url.query?.removingPercentEncoding == "a b")
    }

    @Test func headersCanBeSetReadAndRemoved() {
        var serializer = HTTPRequestSerializer()
        serializer.setValue("Actual Value", forHTTPHeaderField: "Set-Header")
        #expect(serializer.value(forHTTPHeaderField: "Set-Header") == "Actual Value")
        #expect(serializer.value(forHTTPHeaderField: "set-header") == "Actual Value")
        #expect(serializer.value(forHTTPHeaderField: "Unset-Header") == nil)
        serializer.setValue("Other", forHTTPHeaderField: "SET-HEADER")
        #expect(serializer.value(forHTTPHeaderField: "Set-Header") == "Other")
        #expect(serializer.httpRequestHeaders["SET-HEADER"] == "Other")
        serializer.setValue(nil, forHTTPHeaderField: "set-header")
        #expect(serializer.value(forHTTPHeaderField: "Set-Header") == nil)
        #expect(!serializer.httpRequestHeaders.keys.contains { $0.lowercased() == "set-header" })
    }

    @Test func defaultHeadersNeverReplaceHeadersOnTheRequest() throws {
        var serializer = HTTPRequestSerializer()
        serializer.setValue("default", forHTTPHeaderField: "X-Key")
        serializer.setValue("Courier-Test", forHTTPHeaderField: "User-Agent")
        var request = Request(method: .get, url: URL(string: "http://x.test")!)
        try request.setValue("mine", forHTTPHeaderField: "x-key")
        let serialized = try serializer.serialize(request, parameters: nil)
        #expect(serialized.headerFields[values: HTTPField.Name("X-Key")!] == ["mine"])
        #expect(serialized.value(forHTTPHeaderField: "User-Agent") == "Courier-Test")
    }

    @Test func headerValuesWithCRLFAreATypedErrorWhenBuilding() {
        var serializer = HTTPRequestSerializer()
        serializer.setValue("a\r\nInjected: yes", forHTTPHeaderField: "X-Key")
        #expect(throws: CourierError.self) { try serializer.request(method: .get, urlString: "http://x.test") }
        var badName = HTTPRequestSerializer()
        badName.setValue("v", forHTTPHeaderField: "Bad Name")
        #expect(throws: CourierError.self) { try badName.request(method: .get, urlString: "http://x.test") }
    }

    @Test func basicAuthorization() throws {
        var serializer = HTTPRequestSerializer()
        serializer.setAuthorizationHeader(username: "user", password: "password")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        let request = try serializer.request(method: .get, urlString: "http://x.test")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        serializer.setAuthorizationHeader(username: "üser", password: "pä:ss")
        #expect(
            serializer.value(forHTTPHeaderField: "Authorization") == "Basic "
                + Data("üser:pä:ss".utf8).base64EncodedString())
        serializer.clearAuthorizationHeader()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func defaultUserAgentAndAcceptLanguage() throws {
        let serializer = HTTPRequestSerializer()
        let userAgent = try #require(serializer.value(forHTTPHeaderField: "User-Agent"))
        #expect(userAgent.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 })
        #expect(userAgent.contains("/"))
        #expect(userAgent.hasSuffix(")"))
        #expect(
            DefaultHeaders.userAgent(
                executable: "Zoë", version: "1.0", operatingSystem: "Linux", systemVersion: "6.1.0")
                == "Zoe/1.0 (Linux 6.1.0)")
        #expect(
            DefaultHeaders.acceptLanguage(for: ["en-US", "fr", "de", "ja", "zh-Hans", "es", "it"])
                == "en-US;q=1, fr;q=0.9, de;q=0.8, ja;q=0.7, zh-Hans;q=0.6, es;q=0.5")
        #expect(DefaultHeaders.acceptLanguage(for: []) == nil)
        #expect(
            serializer.value(forHTTPHeaderField: "Accept-Language")
                == DefaultHeaders.acceptLanguage(for: Locale.preferredLanguages))
    }

    @Test func optionsReachTheRequest() throws {
        var serializer = HTTPRequestSerializer()
        serializer.timeoutInterval = 12
        serializer.httpShouldHandleCookies = false
        let request = try serializer.request(method: .get, urlString: "http://x.test")
        #expect(request.timeoutInterval == 12)
        #expect(!request.httpShouldHandleCookies)
    }

    /// Copies are independent: 1,000 tasks each change their own copy while the original is read.
    @Test func thousandConcurrentHeaderMutationsOnCopies() async throws {
        var original = HTTPRequestSerializer()
        original.setValue("original", forHTTPHeaderField: "X-Shared")
        let base = original
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    var copy = base
                    copy.setValue("value-\(index)", forHTTPHeaderField: "X-Shared")
                    copy.setValue("\(index)", forHTTPHeaderField: "X-Index-\(index % 7)")
                    if index % 2 == 0 { copy.setValue(nil, forHTTPHeaderField: "User-Agent") }
                    let request = try copy.request(method: .get, urlString: "http://x.test/\(index)")
                    return request.value(forHTTPHeaderField: "X-Shared") == "value-\(index)"
                        && request.value(forHTTPHeaderField: "X-Index-\(index % 7)") == "\(index)"
                        && (request.value(forHTTPHeaderField: "User-Agent") == nil) == (index % 2 == 0)
                        && base.value(forHTTPHeaderField: "X-Shared") == "original"
                }
            }
            var all: [Bool] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 1_000)
        #expect(results.allSatisfy { $0 })
        #expect(original.value(forHTTPHeaderField: "X-Shared") == "original")
        #expect(original.value(forHTTPHeaderField: "User-Agent") != nil)
    }
}

@Suite struct JSONRequestSerializerTests {
    @Test func postWritesJSONAndContentType() throws {
        let serializer = JSONRequestSerializer(writingOptions: [.sortedKeys])
        let request = try serializer.request(
            method: .post, urlString: "http://example.com",
            parameters: [
                "key": "value", "n": 1, "d": 2.5, "i": 3.0, "t": true, "z": nil, "a": [1, "x"], "o": ["p": "a/b"],
            ])
        #expect(
            bodyText(request) == #"{"a":[1,"x"],"d":2.5,"i":3,"key":"value","n":1,"o":{"p":"a\/b"},"t":true,"z":null}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func writingOptions() throws {
        let unescaped = try JSONRequestSerializer.data(for: ["p": "a/b"], options: [.withoutEscapingSlashes])
        #expect(String(decoding: unescaped, as: UTF8.self) == #"{"p":"a/b"}"#)
        let pretty = try JSONRequestSerializer.data(
            for: ["a": 1, "b": [true]], options: [.prettyPrinted, .sortedKeys])
        let text = String(decoding: pretty, as: UTF8.self)
        #expect(text.contains("\n"))
        let reparsed = try JSONSerialization.jsonObject(with: pretty) as? [String: Any]
        #expect(reparsed?["a"] as? Int == 1)
    }

    @Test func nilParametersMeanNoBodyAndNoContentType() throws {
        let request = try JSONRequestSerializer().request(
            method: .post, urlString: "http://example.com", parameters: nil)
        #expect(request.body.isEmpty)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func getStillUsesTheQueryString() throws {
        let request = try JSONRequestSerializer().request(
            method: .get, urlString: "http://example.com", parameters: ["key": "value"])
        #expect(request.url.query == "key=value")
        #expect(request.body.isEmpty)
    }

    @Test func contentTypeAlreadySetIsKept() throws {
        var serializer = JSONRequestSerializer()
        serializer.setValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
        let request = try serializer.request(method: .patch, urlString: "http://example.com", parameters: ["a": 1])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        #expect(bodyText(request) == #"{"a":1}"#)
    }

    @Test func invalidJSONValuesAreTypedErrorsNamingTheKeyPath() {
        let cases: [(Parameters, String)] = [
            (["n": .double(.nan)], "n"),
            (["o": ["inf": .double(.infinity)]], "o[inf]"),
            (["a": [1, .double(-.infinity)]], "a[1]"),
            (["d": .data(Data([1]))], "d"),
            (["s": .set([1])], "s"),
        ]
        for (parameters, path) in cases {
            do {
                _ = try JSONRequestSerializer().request(
                    method: .post, urlString: "http://x.test", parameters: parameters)
                Issue.record("expected an error at \(path)")
            } catch let error as CourierError {
                #expect(error.code == .unsupportedParameterValue)
                #expect(error.offendingInput == path)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func sharedConfigurationForwards() throws {
        var serializer = JSONRequestSerializer()
        serializer.setAuthorizationHeader(username: "user", password: "password")
        serializer.setValue("1", forHTTPHeaderField: "X-One")
        #expect(serializer.value(forHTTPHeaderField: "authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        let request = try serializer.request(method: .post, urlString: "http://x.test", parameters: [:])
        #expect(request.value(forHTTPHeaderField: "X-One") == "1")
        #expect(bodyText(request) == "{}")
        serializer.clearAuthorizationHeader()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
    }
}

@Suite struct PropertyListRequestSerializerTests {
    @Test func xmlBodyAndContentType() throws {
        let request = try PropertyListRequestSerializer().request(
            method: .post, urlString: "http://example.com", parameters: ["key": "value", "n": 1, "t": true])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        let body = try #require(bodyText(request))
        #expect(body.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(body.contains("<key>key</key>\n\t<string>value</string>"))
        let data = try #require(request.body.bufferedBytes).readableBytesView
        let decoded = try PropertyListSerialization.propertyList(from: Data(data), format: nil) as? [String: Any]
        #expect(decoded?["key"] as? String == "value")
        #expect(decoded?["n"] as? Int == 1)
        #expect(decoded?["t"] as? Bool == true)
    }

    @Test func binaryFormat() throws {
        let request = try PropertyListRequestSerializer(format: .binary).request(
            method: .put, urlString: "http://example.com",
            parameters: ["data": .data(Data([1, 2])), "list": [1.5, "x"]])
        let bytes = Data(try #require(request.body.bufferedBytes).readableBytesView)
        #expect(bytes.starts(with: Data("bplist00".utf8)))
        var format = PropertyListSerialization.PropertyListFormat.xml
        let decoded = try PropertyListSerialization.propertyList(from: bytes, format: &format) as? [String: Any]
        #expect(format == .binary)
        #expect(decoded?["data"] as? Data == Data([1, 2]))
    }

    @Test func nullAnywhereIsATypedError() {
        for (parameters, path) in [(["n": nil] as Parameters, "n"), (["a": ["b": [1, nil]]], "a[b][1]")] {
            do {
                _ = try PropertyListRequestSerializer().request(
                    method: .post, urlString: "http://x.test", parameters: parameters)
                Issue.record("expected an error")
            } catch let error as CourierError {
                #expect(error.code == .unsupportedParameterValue)
                #expect(error.offendingInput == path)
                #expect(error.message.contains("null"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func nilParametersMeanNoBody() throws {
        let request = try PropertyListRequestSerializer().request(method: .post, urlString: "http://example.com")
        #expect(request.body.isEmpty)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }
}
