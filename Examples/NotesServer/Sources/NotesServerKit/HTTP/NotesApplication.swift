public import Hummingbird
public import Logging
public import NIOCore

/// The Hummingbird application of the service: a `Service` to run in a `ServiceGroup`.
public typealias NotesApplication = Application<RouterResponder<BasicRequestContext>>

extension NotesApplication {
    /// The service over `backend`, listening on `host`:`port` (0: a free port, which
    /// `onServerRunning` learns from the channel's local address).
    ///
    /// ```swift
    /// let app = NotesApplication.notes(backend: try await BackendKind.lmdbrealm.open(at: url),
    ///                                  metrics: NotesMetrics(), port: 8080, logger: logger)
    /// let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    /// try await group.run()
    /// ```
    public static func notes(
        backend: any NotesBackend, metrics: NotesMetrics, host: String = "127.0.0.1", port: Int, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> NotesApplication {
        let router = Router()
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: LogRequestsMiddleware(.debug))
        NotesRoutes(backend: backend, metrics: metrics).register(on: router)
        return Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "NotesServer"),
            onServerRunning: onServerRunning,
            logger: logger)
    }
}
