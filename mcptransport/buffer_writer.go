package mcptransport

import (
	"bytes"
	"net/http"
)

// BufferWriter is an http.ResponseWriter that keeps the answer (no streaming).
type BufferWriter struct {
	header http.Header
	Status int
	Body   bytes.Buffer
}

func NewBufferWriter() *BufferWriter { return &BufferWriter{header: http.Header{}} }

func (b *BufferWriter) Header() http.Header { return b.header }

func (b *BufferWriter) WriteHeader(status int) {
	if b.Status == 0 {
		b.Status = status
	}
}

func (b *BufferWriter) Write(p []byte) (int, error) {
	if b.Status == 0 {
		b.Status = http.StatusOK
	}
	return b.Body.Write(p)
}

// CopyTo writes the kept answer to w.
func (b *BufferWriter) CopyTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	status := b.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.Body.Bytes())
}
