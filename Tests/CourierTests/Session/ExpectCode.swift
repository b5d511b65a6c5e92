import Courier
import Testing

@testable import CourierCore

/// Expects `body` to throw a ``CourierError`` with `code`.
func expectCode<R>(
    _ code: CourierError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    do {
        _ = try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CourierError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects `body` to throw a ``CourierError`` with `code`, asynchronously; returns the error.
@discardableResult
func expectCode<R>(
    _ code: CourierError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CourierError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
