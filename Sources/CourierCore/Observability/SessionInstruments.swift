import Logging
import Metrics
import Tracing

/// The tracer, metrics factory and logger a manager reports to, resolved once when it is made.
///
/// Each is nil when it would record nothing: no tracer or swift-distributed-tracing's
/// `NoOpTracer`, swift-metrics' `NOOPMetricsHandler`, a logger above `debug`. A task then
/// skips that instrument entirely, so a process that bootstrapped none of them pays no span,
/// metric or log allocation per request.
struct SessionInstruments: Sendable {
    let tracer: (any Tracer)?
    let metricsFactory: (any MetricsFactory)?
    let logger: Logger?
    let redaction: HeaderRedaction

    init(tracer: (any Tracer)?, metricsFactory: (any MetricsFactory)?, logger: Logger?, redaction: HeaderRedaction) {
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer is NoOpTracer ? nil : tracer
        let factory = metricsFactory ?? MetricsSystem.factory
        self.metricsFactory = factory is NOOPMetricsHandler ? nil : factory
        self.logger = logger.flatMap { $0.logLevel <= .debug ? $0 : nil }
        self.redaction = redaction
    }

    /// True when any instrument records.
    var isActive: Bool { tracer != nil || metricsFactory != nil || logger != nil }
}
