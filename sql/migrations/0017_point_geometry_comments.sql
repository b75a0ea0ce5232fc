-- A plot's geometry may be a Point since the EUDR readiness checks (the EU Information System
-- accepts one for a plot of at most 4 ha): the column comments said Polygon only.
comment on column plots.geometry is 'GeoJSON Polygon or MultiPolygon, or a Point (as the EU Information System accepts for a plot of at most 4 ha), [longitude, latitude], WGS84, as the service sent it.';
comment on column plots.geometry_valid is 'false when the shape is not a valid polygon (see geometry_issue), a Point included (flagged: a point, not a polygon); such plots are stored and flagged, never dropped.';
comment on column plots.area_ha is 'Area of the polygon computed with @turf/area, in hectares; null for a Point (a point has no area: its reported surface_area_m2 is what there is).';
