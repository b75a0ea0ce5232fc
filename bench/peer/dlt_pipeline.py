"""The peer of `ddsync refresh` for bench:peer: dlt's rest_api source loading the same service.

Reads the suppliers (GET /business-connections/suppliers) and every supplier's plots
(GET /businesses/{id}/plots, 500 a page) into Postgres, merged on id, GeoJSON kept as one JSON
column, as a data engineer would set dlt up for this API. Tuned where dlt offers it: resources run
in parallel, paging stops at the first short page (as ddsync's does, one request fewer per supplier
than stopping at an empty page), normalize and load use both cores, and load files go in by COPY.

Settings come from the environment (never the command line, which `ps` shows):
  PEER_BASE_URL, PEER_CLIENT_ID, PEER_CLIENT_SECRET, PEER_DATABASE_URL, PEER_DATASET,
  PEER_PIPELINES_DIR. Prints one JSON line: the seconds pipeline.run took. (The rows loaded are
  counted in the warehouse by bench:peer: the normalize info's row_counts over-counted here, 5.4 M
  plot rows for 122,000 sent, with files rotated and two normalize workers.)
"""

import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

import dlt
from dlt.common.configuration import configspec
from dlt.sources.helpers.rest_client.auth import OAuth2ClientCredentials
from dlt.sources.helpers.rest_client.paginators import PageNumberPaginator
from dlt.sources.rest_api import rest_api_source

PAGE_SIZE = 500


@configspec
class JsonClientCredentials(OAuth2ClientCredentials):
    """The service's token endpoint takes its client credentials as JSON, not as a form."""

    def build_access_token_request(self) -> Dict[str, Any]:
        return {
            "json": {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "grant_type": "client_credentials",
            }
        }


class ShortPageStops(PageNumberPaginator):
    """Plain arrays with no total: a page shorter than the limit is the last one."""

    def __init__(self, limit: int) -> None:
        super().__init__(base_page=1, page_param="page", total_path=None, stop_after_empty_page=True)
        self.limit = limit

    def update_state(self, response: Any, data: Optional[List[Any]] = None) -> None:
        super().update_state(response, data)
        if data is not None and len(data) < self.limit:
            self._has_next_page = False


def required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        sys.exit(f"dlt_pipeline.py: {name} is not set")
    return value


def main() -> None:
    base_url = required("PEER_BASE_URL").rstrip("/")
    source = rest_api_source(
        {
            "client": {
                "base_url": base_url + "/",
                "auth": JsonClientCredentials(
                    access_token_url=base_url + "/auth/machine-to-machine-clients/token",
                    client_id=required("PEER_CLIENT_ID"),
                    client_secret=required("PEER_CLIENT_SECRET"),
                    default_token_expiration=86400,
                ),
            },
            "resource_defaults": {"primary_key": "id", "write_disposition": "merge"},
            "resources": [
                {
                    "name": "suppliers",
                    "endpoint": {"path": "business-connections/suppliers", "paginator": "single_page"},
                },
                {
                    "name": "plots",
                    "endpoint": {
                        "path": "businesses/{business_id}/plots",
                        "params": {
                            "business_id": {
                                "type": "resolve",
                                "resource": "suppliers",
                                "field": "sourceBusiness.id",
                            },
                            "limit": PAGE_SIZE,
                        },
                        "paginator": ShortPageStops(PAGE_SIZE),
                    },
                    # GeoJSON (the plot's and each analysis's deforested area) and customData as JSON
                    # columns, not unnested into tables of coordinates and keys.
                    "columns": {
                        name: {"data_type": "json"}
                        for name in (
                            "geometry",
                            "custom_data",
                            "most_recent_analysis__deforested_geometry",
                            "most_recent_analyses_by_type__euforobs__deforested_geometry",
                            "most_recent_analyses_by_type__precision__deforested_geometry",
                        )
                    },
                    # A plot listed under two suppliers is one plot.
                    "include_from_parent": [],
                },
            ],
        },
        parallelized=True,
    )
    pipeline = dlt.pipeline(
        pipeline_name="peer_" + required("PEER_DATASET"),
        pipelines_dir=required("PEER_PIPELINES_DIR"),
        destination=dlt.destinations.postgres(credentials=required("PEER_DATABASE_URL")),
        dataset_name=required("PEER_DATASET"),
        progress="log" if os.environ.get("PEER_PROGRESS") else None,
    )
    started = time.perf_counter()
    # csv: dlt loads it into Postgres by COPY, its fastest way in (insert_values is its default).
    info = pipeline.run(source, loader_file_format="csv")
    seconds = time.perf_counter() - started
    info.raise_on_failed_jobs()
    print(json.dumps({"seconds": seconds}))


if __name__ == "__main__":
    main()
