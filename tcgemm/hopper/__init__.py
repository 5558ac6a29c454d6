"""The Hopper chapter: wgmma layouts, the tile timeline, the power limit."""
