module github.com/megaproof/megaproof

go 1.26

require (
	github.com/dominikbraun/graph v0.23.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
