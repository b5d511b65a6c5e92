import Foundation

/// A serializer held as `any ResponseSerializer`, with its value type erased to `any Sendable`.
///
/// Lets a manager's configurable ``HTTPSessionManager/responseSerializer`` go through the same
/// generic path as a typed serializer, so the untyped verbs are a layer over the typed ones
/// rather than a second implementation.
struct ErasedResponseSerializer: ResponseSerializer {
    let base: any ResponseSerializer

    init(_ base: any ResponseSerializer) { self.base = base }

    func validate(request: Request, response: ResponseHead, data: Data) throws {
        try base.validate(request: request, response: response, data: data)
    }

    func serialize(request: Request, response: ResponseHead, data: Data) throws -> any Sendable {
        try base.serialize(request: request, response: response, data: data)
    }
}
