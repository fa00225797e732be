// Package runner is the client side of a benchmark and its local conductor:
// a Runner checks and prepares one client's volume, then runs fio for every
// step its Coordinator orders, starting at the ordered instant, and
// publishes each result; the Conductor waits for every client, orders the
// steps and aggregates their results exactly. Local runs both on one
// machine through an FileExchange directory. The messages and step decisions are
// internal/protocol's. It must not depend on Kubernetes: the API server
// transport is internal/exchange's, behind the Coordinator, Publisher and
// Clock interfaces.
package runner
