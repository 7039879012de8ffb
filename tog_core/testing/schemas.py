"""The GraphRAG 3.x output tables' columns and types, for scripts and tests that write GraphRAG projects by hand
(demo/build_demo.py, bench/data/build_multilingual.py): the schema `graphrag index` writes, so the loader reads
them exactly as it reads a real output."""
from __future__ import annotations

import pyarrow as pa

LIST_STR = pa.list_(pa.string())
SCHEMAS = {
    "entities": pa.schema([("id", pa.string()), ("human_readable_id", pa.int64()), ("title", pa.string()),
                           ("type", pa.string()), ("description", pa.string()), ("text_unit_ids", LIST_STR),
                           ("frequency", pa.int64()), ("degree", pa.int64())]),
    "relationships": pa.schema([("id", pa.string()), ("human_readable_id", pa.int64()), ("source", pa.string()),
                                ("target", pa.string()), ("description", pa.string()), ("weight", pa.float64()),
                                ("combined_degree", pa.int64()), ("text_unit_ids", LIST_STR)]),
    "text_units": pa.schema([("id", pa.string()), ("human_readable_id", pa.int64()), ("text", pa.string()),
                             ("n_tokens", pa.int64()), ("document_id", pa.string()), ("entity_ids", LIST_STR),
                             ("relationship_ids", LIST_STR), ("covariate_ids", LIST_STR)]),
    "documents": pa.schema([("id", pa.string()), ("human_readable_id", pa.int64()), ("title", pa.string()),
                            ("text", pa.string()), ("text_unit_ids", LIST_STR), ("creation_date", pa.string()),
                            ("metadata", pa.null())]),
    "communities": pa.schema([("id", pa.string()), ("human_readable_id", pa.int64()), ("community", pa.int64()),
                              ("level", pa.int64()), ("parent", pa.int64()), ("children", pa.list_(pa.int64())),
                              ("title", pa.string()), ("entity_ids", LIST_STR), ("relationship_ids", LIST_STR),
                              ("text_unit_ids", LIST_STR), ("period", pa.string()), ("size", pa.int64())]),
}
