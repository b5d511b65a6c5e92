import Foundation

/// A type-erased serializer producing `Value`, for mixing serializers in a ``CompoundResponseSerializer``.
public struct AnyResponseSerializer<Value: Sendable>: ResponseSerializer {
    private let validator: @Sendable (Request, ResponseHead, Data) throws -> Void
    private let serializer: @Sendable (Request, ResponseHead, Data) throws -> Value

    /// Wraps `base`, turning its output into `Value` with `transform`.
    public init<Base: ResponseSerializer>(
        _ base: Base, transform: @escaping @Sendable (Base.SerializedObject) throws -> Value
    ) {
        validator = { try base.validate(request: $0, response: $1, data: $2) }
        serializer = { try transform(base.serialize(request: $0, response: $1, data: $2)) }
    }

    /// Wraps `base` unchanged.
    public init<Base: ResponseSerializer>(_ base: Base) where Base.SerializedObject == Value {
        self.init(base, transform: { $0 })
    }

    /// Runs the wrapped serializer's validation.
    /// - Throws: whatever it throws.
    public func validate(request: Request, response: ResponseHead, data: Data) throws {
        try validator(request, response, data)
    }

    /// Runs the wrapped serializer and the transform.
    /// - Throws: whatever they throw.
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> Value {
        try serializer(request, response, data)
    }
}

/// Tries serializers in order; the first whose validation accepts the response decodes it
/// (AFCompoundResponseSerializer).
///
/// Put the narrow ones first: `[json, xml, string]` decodes JSON bodies as JSON, XML bodies as
/// XML, and anything else as text.
public struct CompoundResponseSerializer<Value: Sendable>: ResponseSerializer {
    /// The serializers, in the order they are asked.
    public var serializers: [AnyResponseSerializer<Value>]

    /// Makes a compound serializer.
    public init(_ serializers: [AnyResponseSerializer<Value>]) {
        self.serializers = serializers
    }

    /// Accepts when any serializer accepts.
    /// - Throws: the first serializer's validation error when none accepts, or
    ///   ``CourierError`` `unacceptableContentType` when the list is empty.
    public func validate(request: Request, response: ResponseHead, data: Data) throws {
        _ = try firstAccepting(request: request, response: response, data: data)
    }

    /// Decodes with the first serializer that accepts the response; its decoding errors are
    /// not retried with the next one, as in AFNetworking.
    /// - Throws: as ``validate(request:response:data:)``, or the chosen serializer's error.
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> Value {
        try firstAccepting(request: request, response: response, data: data)
            .serialize(request: request, response: response, data: data)
    }

    private func firstAccepting(request: Request, response: ResponseHead, data: Data) throws -> AnyResponseSerializer<
        Value
    > {
        var firstError: (any Error)?
        for serializer in serializers {
            do {
                try serializer.validate(request: request, response: response, data: data)
                return serializer
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        throw firstError
            ?? CourierError.response(
                .unacceptableContentType, "No serializer to decode the response from \(response.url.absoluteString)",
                response: response, data: data
            )
    }
}
