"""Chart model and exporters: `model` (the contract with the engine), `text` (sseq's text chart), `svg`,
`json_export`, `seqsee`. Imports nothing from fp, algebra or nassau."""
