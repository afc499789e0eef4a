"""Content parts used across the content tests: one of every kind, bytes and URL."""

from __future__ import annotations

from toolweave.chat import Media

PNG = b'\x89PNG\r\n\x1a\n' + bytes(range(256)) * 4
PDF = b'%PDF-1.4\n% toolweave test\n' + bytes(range(256))
WAV = b'RIFF\x24\x00\x00\x00WAVEfmt ' + bytes(32)

IMAGE = Media('image/png', PNG, 'chart.png')
IMAGE_URL = Media('image/jpeg', 'https://example.com/cat.jpg')
PDF_DOC = Media('application/pdf', PDF, 'report.pdf')
PDF_URL = Media('application/pdf', 'https://example.com/report.pdf')
AUDIO = Media('audio/wav', WAV)

EVERY_PART = {'image': IMAGE, 'image_url': IMAGE_URL, 'pdf': PDF_DOC, 'pdf_url': PDF_URL, 'audio': AUDIO}
