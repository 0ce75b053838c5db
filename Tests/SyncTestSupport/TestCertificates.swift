public import Foundation

/// Certificates made by `openssl` for a test: a root (a certificate authority of the test's
/// own) and server certificates it signs, each for the names given. Elliptic-curve keys
/// (P-256): made in milliseconds.
///
/// ```swift
/// let root = try TestCertificates(in: dir, name: "root")
/// let server = try PostgresServer.start(tls: try root.server(names: ["IP:127.0.0.1"], in: dir))
/// // connect with .verifyFull(rootCertificate: root.certificate)
/// ```
public struct TestCertificates: Sendable {
    /// The root certificate (PEM): what a client is told to trust.
    public let certificate: URL
    private let key: URL
    private let directory: URL
    private let name: String

    /// A server certificate and its private key (PEM files).
    public struct Server: Sendable {
        public let certificate: URL
        public let key: URL
    }

    /// Makes a new root certificate authority `name` in `directory` (`name.pem`, `name.key`).
    public init(in directory: URL, name: String) throws {
        self.directory = directory
        self.name = name
        certificate = directory.appendingPathComponent("\(name).pem")
        key = directory.appendingPathComponent("\(name).key")
        try Self.openssl(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=LMDBRealm test root \(name)",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: directory)
    }

    /// A server certificate signed by this root for `names` (subject alternative names such as
    /// `IP:127.0.0.1` or `DNS:localhost`), as `file.crt` and `file.key` in the root's directory.
    public func server(names: [String], file: String) throws -> Server {
        let certificate = directory.appendingPathComponent("\(file).crt")
        let key = directory.appendingPathComponent("\(file).key")
        let request = directory.appendingPathComponent("\(file).csr")
        let extensions = directory.appendingPathComponent("\(file).ext")
        try Self.openssl(
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.path,
                "-out", request.path, "-subj", "/CN=\(file)",
            ], in: directory)
        do {
            try Data("subjectAltName=\(names.joined(separator: ","))\nextendedKeyUsage=serverAuth\n".utf8).write(to: extensions)
        } catch {
            throw PostgresServerError("could not write \(extensions.path): \(error)")
        }
        try Self.openssl(
            [
                "x509", "-req", "-in", request.path, "-CA", self.certificate.path, "-CAkey", self.key.path,
                "-CAcreateserial", "-out", certificate.path, "-days", "2", "-extfile", extensions.path,
            ], in: directory)
        return Server(certificate: certificate, key: key)
    }

    /// Runs openssl with `arguments`; throws with its output when it fails.
    private static func openssl(_ arguments: [String], in directory: URL) throws {
        let candidates = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw PostgresServerError("openssl is missing; install it with `apt-get install openssl` (as root)")
        }
        // Through Command (output to files, not pipes): a server or process another test starts
        // meanwhile would inherit a pipe's end and keep its reader waiting for ever.
        _ = try Command.runChecked((URL(fileURLWithPath: path), arguments), in: directory)
    }
}
