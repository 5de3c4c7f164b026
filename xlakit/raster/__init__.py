"""Raster drawing with the standard library: font parsing (fonts, bitmapfont), an anti-aliased
scanline rasterizer (canvas), a PNG encoder (png) and chart layout (chart)."""
