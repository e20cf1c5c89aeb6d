"""Chart model and exporters: `model` (the contract with the engine), `text` (sseq's text chart), `svg`,
`json_export`, `seqsee`, `html` (the interactive page, with `pages`: E3 from d2). Imports nothing from fp, algebra
or nassau."""
