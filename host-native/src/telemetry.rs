//! The process's OpenTelemetry setting, applied to every engine connection it opens (the
//! worker's, a bridge's link to its main, the load tools' clients).

use iii_sdk::InitOptions;

/// Whether this process exports OpenTelemetry data (spans, logs, metrics) to the engine: only
/// when `OTEL_ENABLED` is `true` or `1`. Off by default, unlike iii-sdk's default: every function
/// of the worker is registered `trace_hidden`, and the SDK's span per invocation (with the
/// payloads serialized into it) and its exporter cost about as much CPU as the rest of a call.
pub fn telemetry_enabled() -> bool {
    std::env::var("OTEL_ENABLED").is_ok_and(|v| v == "true" || v == "1")
}

/// `options` with OpenTelemetry export set by [`telemetry_enabled`]. Use it for every engine
/// connection of the process: the SDK's telemetry is process-wide and the first connection to
/// start decides.
pub fn with_telemetry(mut options: InitOptions) -> InitOptions {
    let mut otel = options.otel.take().unwrap_or_default();
    otel.enabled = Some(telemetry_enabled());
    options.otel = Some(otel);
    options
}

/// A client connection named `name` with the worker's telemetry setting (the load tools' own
/// connections: their floor then pays what the worker pays).
pub fn client_connection(url: &str, name: &str) -> iii_sdk::IIIClient {
    let meta = iii_sdk::runtime::WorkerMetadata { name: name.into(), ..Default::default() };
    let options = InitOptions {
        metadata: Some(meta),
        identity: iii_sdk::WorkerIdentityMode::Explicit,
        ..Default::default()
    };
    iii_sdk::register_worker(url, with_telemetry(options))
}
