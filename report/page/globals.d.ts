// The two libraries the report inlines before its own script, as globals (leaflet's dist/leaflet.js,
// topojson-client's dist/topojson-client.min.js): only the parts the page uses, as their 1.9.4 and
// 3.1.0 documentation describes them.

declare namespace L {
  type PointTuple = [number, number];
  type LatLngTuple = [number, number];
  interface Point {
    x: number;
    y: number;
    add(other: Point): Point;
  }
  interface LatLng {
    lat: number;
    lng: number;
  }
  interface LatLngBounds {
    extend(latLng: LatLngTuple): LatLngBounds;
    pad(ratio: number): LatLngBounds;
  }
  interface LeafletMouseEvent {
    containerPoint: Point;
  }
  /** What L.canvas() makes, handed on to L.geoJSON. */
  interface Renderer {
    options: { padding: number };
  }
  interface Layer {
    addTo(map: Map): this;
  }
  interface Map {
    getSize(): Point;
    getZoom(): number;
    getPixelOrigin(): Point;
    getPanes(): { overlayPane: HTMLElement };
    containerPointToLayerPoint(point: PointTuple): Point;
    containerPointToLatLng(point: PointTuple): LatLng;
    latLngToContainerPoint(latLng: LatLngTuple): Point;
    setView(center: LatLngTuple | LatLng, zoom: number, options?: { animate?: boolean }): this;
    fitBounds(bounds: LatLngBounds, options?: { animate?: boolean; maxZoom?: number }): this;
    on(events: 'mousemove' | 'click', handler: (event: LeafletMouseEvent) => void): this;
    on(events: string, handler: () => void): this;
  }
  function map(
    element: HTMLElement,
    options: {
      preferCanvas: boolean;
      attributionControl: boolean;
      worldCopyJump: boolean;
      minZoom: number;
      maxZoom: number;
    },
  ): Map;
  function canvas(options: { padding: number }): Renderer;
  function geoJSON(
    data: unknown,
    options: {
      renderer: Renderer;
      interactive: boolean;
      style: { color: string; weight: number; fillColor: string; fillOpacity: number };
    },
  ): Layer;
  function latLngBounds(a: LatLngTuple, b: LatLngTuple): LatLngBounds;
  const Layer: { extend(members: { onAdd(map: Map): void }): new () => Layer };
  const DomUtil: {
    create(tagName: string, className: string): HTMLElement;
    setPosition(element: HTMLElement, position: Point): void;
  };
}

declare namespace topojson {
  interface FeatureCollection {
    features: Array<{ geometry: { type: string; coordinates: unknown } | null }>;
  }
  function feature(topology: unknown, object: unknown): FeatureCollection;
}
