import Testing

@testable import Courier

@Test func methodToken() { #expect(HTTPMethod("GET") != nil); #expect(HTTPMethod("G T") == nil) }
