package web

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
)

// pageGzipMin is the smallest page worth compressing.
const pageGzipMin = 1024

// gzipPage gzip-compresses a page without ever compressing the secret it carries (the
// CSRF or form token): every occurrence of secret goes into the stream as a stored,
// uncompressed deflate block, and each run of the page between them is compressed on
// its own, so no text of the page is ever encoded against the secret. The compressed
// size then says nothing about how much of the secret a reflected value (an agent ID
// or tool name from the URL) matched, which is what the BREACH attack measures.
func gzipPage(page []byte, secret string) ([]byte, error) {
	var out bytes.Buffer
	// The gzip header: deflate, no flags, no time, unknown OS.
	out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255})
	parts := [][]byte{page}
	if secret != "" {
		parts = bytes.Split(page, []byte(secret))
	}
	for i, part := range parts {
		zw, err := flate.NewWriter(&out, flate.DefaultCompression)
		if err != nil {
			return nil, err
		}
		if _, err := zw.Write(part); err != nil {
			return nil, err
		}
		if i == len(parts)-1 {
			// The last run ends the stream with a final block.
			if err := zw.Close(); err != nil {
				return nil, err
			}
			break
		}
		// A sync flush ends the run's blocks on a byte boundary, not final.
		if err := zw.Flush(); err != nil {
			return nil, err
		}
		// The secret as a stored block: BFINAL 0, BTYPE 00, padded to the byte, then
		// LEN and its one's complement NLEN, little-endian, then the bytes themselves.
		n := uint16(len(secret))
		out.WriteByte(0)
		_ = binary.Write(&out, binary.LittleEndian, [2]uint16{n, ^n})
		out.WriteString(secret)
	}
	// The trailer: CRC-32 and length of the uncompressed page.
	_ = binary.Write(&out, binary.LittleEndian, [2]uint32{crc32.ChecksumIEEE(page), uint32(len(page))})
	return out.Bytes(), nil
}
