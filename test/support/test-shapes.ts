/** GeoJSON polygons for the spatial tests: a square, and a bow tie (its sides cross), d degrees wide. */

export const square = (lon: number, lat: number, d = 0.001) => ({
  type: 'Polygon',
  coordinates: [
    [
      [lon, lat],
      [lon + d, lat],
      [lon + d, lat + d],
      [lon, lat + d],
      [lon, lat],
    ],
  ],
});

export const bowTie = (lon: number, lat: number, d = 0.001) => ({
  type: 'Polygon',
  coordinates: [
    [
      [lon, lat],
      [lon + d, lat + d],
      [lon + d, lat],
      [lon, lat + d],
      [lon, lat],
    ],
  ],
});
