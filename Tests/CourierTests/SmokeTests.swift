import Courier
import Testing

@testable import CourierCore

@Test func methodToken() { #expect(HTTPMethod("GET") != nil); #expect(HTTPMethod("G T") == nil) }
