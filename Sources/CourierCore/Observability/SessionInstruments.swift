import Logging
import Metrics
import Tracing

/// The tracer, metrics factory and logger a manager reports to, resolved once when it is made.
///
/// Each is nil when it would record nothing: no tracer or swift-distributed-tracing's
/// `NoOpTracer`, swift-metrics' `NOOPMetricsHandler`, a logger above `debug`. A task then
/// skips that instrument entirely, so a process that bootstrapped none of them pays no span,
/// metric or log allocation per request.
///
/// A class: each task's observer keeps the manager's instruments, and a reference is one retain
/// where a copy of the value would retain each of its references and copy the redaction's set.
final class SessionInstruments: Sendable {
    let tracer: (any Tracer)?
    let metricsFactory: (any MetricsFactory)?
    let logger: Logger?
    let redaction: HeaderRedaction
    /// True when any instrument records; asked once per task.
    let isActive: Bool

    init(tracer: (any Tracer)?, metricsFactory: (any MetricsFactory)?, logger: Logger?, redaction: HeaderRedaction) {
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer is NoOpTracer ? nil : tracer
        let factory = metricsFactory ?? MetricsSystem.factory
        self.metricsFactory = factory is NOOPMetricsHandler ? nil : factory
        self.logger = logger.flatMap { $0.logLevel <= .debug ? $0 : nil }
        self.redaction = redaction
        isActive = self.tracer != nil || self.metricsFactory != nil || self.logger != nil
    }
}
