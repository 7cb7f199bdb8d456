"""The India Driving Dataset (IDD20K, ICVGIP 2020 challenge): its label table and mask creation."""
