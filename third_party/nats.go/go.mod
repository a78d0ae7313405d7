module github.com/nats-io/nats.go

go 1.26.0

require (
	github.com/klauspost/compress v1.20.0
	github.com/nats-io/nkeys v0.4.16
	github.com/nats-io/nuid v1.0.1
)

require (
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
