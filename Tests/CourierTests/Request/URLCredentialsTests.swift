import Courier
import Foundation
import Testing

/// Credentials in a URL become Basic authorization and leave the URL; messages never show the password.
@Suite struct URLCredentialsTests {
    @Test func userInfoBecomesBasicAuthorizationAndLeavesTheURL() throws {
        let request = try HTTPRequestSerializer().request(
            method: .get, urlString: "http://ann:p%40ss@127.0.0.1:8080/x?q=1")
        #expect(request.url.absoluteString == "http://127.0.0.1:8080/x?q=1")
        // base64("ann:p@ss")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YW5uOnBAc3M=")
    }

    @Test func aDefaultAuthorizationHeaderWins() throws {
        var serializer = HTTPRequestSerializer()
        serializer.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        let request = try serializer.request(method: .get, urlString: "http://ann:secret@x.org/")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(!request.url.absoluteString.contains("secret"))
    }

    @Test func aUserWithoutPasswordHasAnEmptyOne() throws {
        let request = try HTTPRequestSerializer().request(method: .get, urlString: "http://ann@x.org/")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YW5uOg==")
        #expect(request.url.absoluteString == "http://x.org/")
    }

    @Test func invalidURLMessageRedactsThePassword() {
        do {
            _ = try HTTPRequestSerializer().makeRequest(method: .get, urlString: "http://ann:hunter2@x y/")
            Issue.record("expected .invalidURL")
        } catch let error as CourierError {
            #expect(error.code == .invalidURL)
            #expect(!error.message.contains("hunter2"))
            #expect(error.message.contains("ann:<redacted>@"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func passwordsInTextAreRedacted() {
        #expect(
            HeaderRedaction.redactingURLPasswords(in: "cannot connect to http://u:p@h:1/x, or \"https://a:b:c@d\"")
                == "cannot connect to http://u:<redacted>@h:1/x, or \"https://a:<redacted>@d\"")
        #expect(HeaderRedaction.redactingURLPasswords(in: "http://user@host/a:b@c") == "http://user@host/a:b@c")
        #expect(HeaderRedaction.redactingURLPasswords(in: "no url here") == "no url here")
        #expect(HeaderRedaction.redactingURLPasswords(in: "ht!tp://x:y@bad url") == "ht!tp://x:<redacted>@bad url")
    }
}
