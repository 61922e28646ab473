package mockservice

// NewHTTPServer lets the benchmarks serve a bare handler with the service's
// own HTTP server settings.
var NewHTTPServer = newHTTPServer
