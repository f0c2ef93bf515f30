module github.com/genesis-toolchain/genesis

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/tools v0.52.0
)
